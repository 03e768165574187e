package engine

import (
	"encoding/json"
	"errors"

	"github.com/flowgate/flowgate/host/store"
)

// historyQueueLen bounds a drop tier's queue in a history's meta, so the
// meta stays small: a queue that runs empty is refilled by one scan.
const historyQueueLen = 16

// historyRefillWindow is the most entries one refill scan reads.
const historyRefillWindow = 64

// tierQueue is what a history's meta knows of one drop tier's oldest
// entries, so that the bound finds the entry to drop without scanning the
// history. Seqs holds, oldest first, every entry of the tier with a seq
// below Known that is still there (Known 0 or 1: nothing is known). An
// append adds its entry when the queue is complete up to it and has room,
// a drop takes the first, and an empty queue is refilled by a scan from
// Known.
type tierQueue struct {
	Seqs  []int64 `json:"seqs,omitempty"`
	Known int64   `json:"known,omitempty"`
	tier  string  // tierProgress or tierOrdinary
}

// queues returns meta's drop-tier queues in the order the bound drops
// from them, progress first. A meta written without them (by an older
// version) gets empty ones, known up to its ProgressFrom and OrdinaryFrom.
func (m *historyMeta) queues() []*tierQueue {
	if m.Progress == nil {
		m.Progress = &tierQueue{Known: m.ProgressFrom}
	}
	if m.Ordinary == nil {
		m.Ordinary = &tierQueue{Known: m.OrdinaryFrom}
	}
	m.Progress.tier, m.Ordinary.tier = tierProgress, tierOrdinary
	return []*tierQueue{m.Progress, m.Ordinary}
}

// appended notes entry seq, of drop tier tier ("" for a kept kind), just
// appended.
func (q *tierQueue) appended(seq int64, tier string) {
	if max(q.Known, 1) != seq {
		return // entries before seq are not known: a refill reads them
	}
	if tier == q.tier {
		if len(q.Seqs) == historyQueueLen {
			return
		}
		q.Seqs = append(q.Seqs, seq)
	}
	q.Known = seq + 1
}

// from is where an older version's search for the tier's oldest entry
// starts: every entry of the tier before it is gone.
func (q *tierQueue) from() int64 {
	if len(q.Seqs) > 0 {
		return q.Seqs[0]
	}
	return q.Known
}

// oldestOfTier returns the seq of the oldest entry of queue q's tier in
// flow flowID's history before newest, refilling q when it is empty; 0
// when there is none.
func (t *txn) oldestOfTier(flowID string, q *tierQueue, newest int64) (int64, error) {
	for len(q.Seqs) == 0 && max(q.Known, 1) < newest {
		if err := t.refill(flowID, q, newest); err != nil {
			return 0, err
		}
	}
	if len(q.Seqs) == 0 || q.Seqs[0] >= newest {
		return 0, nil
	}
	return q.Seqs[0], nil
}

// refill scans flow flowID's history from q.Known on, before newest, for
// entries of q's tier, historyRefillWindow entries at most, and adds
// them to q, moving q.Known past what it read.
func (t *txn) refill(flowID string, q *tierQueue, newest int64) error {
	opts := store.ScanOptions{Limit: historyRefillWindow}
	if q.Known > 1 {
		opts.After = historyEntryKey(flowID, q.Known-1)
	}
	var (
		read    int
		reached bool // the scan came to newest
		bad     error
	)
	err := t.tx.Scan(historyDir(flowID)+"e/", opts, func(it store.Item) bool {
		var en struct {
			Seq  int64       `json:"seq"`
			Kind HistoryKind `json:"kind"`
		}
		if bad = json.Unmarshal(it.Value, &en); bad != nil {
			bad = &DamagedRecord{Key: it.Key, Reason: "it does not decode: " + bad.Error()}
			return false
		}
		read++
		if en.Seq >= newest {
			reached = true
			return false
		}
		if en.Kind.tier() == q.tier {
			q.Seqs = append(q.Seqs, en.Seq)
		}
		q.Known = en.Seq + 1
		return len(q.Seqs) < historyQueueLen
	})
	if err == nil && bad == nil && (reached || read < historyRefillWindow && len(q.Seqs) < historyQueueLen) {
		q.Known = newest // every entry before newest was read
	}
	return errors.Join(err, bad)
}
