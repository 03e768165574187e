package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// A flow's history is the readable record of everything that happened to
// it and its tasks. Every engine write that changes a flow or a task
// appends its entries in the same transaction (saveFlow and saveTask call
// in here), so no change can commit without its entry and no entry without
// its change. The history lives under history/<flow id>/ and goes with the
// flow when it is pruned; it has nothing to do with the controller event
// outbox, whose events are deleted once delivered.
//
// Keys, all under history/<flow id>/:
//
//	e/<seq>    one HistoryEntry
//	meta       historyMeta: the newest entry's seq, how many entries the
//	           bound dropped, and the oldest entries of each drop tier
//
// An append costs two puts and one point read: the meta says the next
// seq and, once the history is full, which entry to drop (see tierQueue),
// so an append scans the history only to refill a drop tier's queue,
// about once every 16 drops, for a flow's first entry (there is no meta
// yet), or once for a meta an older version wrote.
// On etcd a scan is a round trip that the store's point-read cache cannot
// answer; the meta's read it can. The entry is
// created with store.Create, so an entry appended meanwhile by a version
// that does not keep the meta's seq is found, not overwritten. The count
// kept is the last seq less the count dropped. Milestones and decisions
// (see HistoryKind.Kept) are never dropped; progress is dropped first,
// then the other entries.
//
// Stores written before this layout also hold a drop mark per droppable
// entry (p/<seq> for progress, o/<seq> for the others); it is deleted
// with its entry.
const historyPrefix = "history/"

// DefaultHistoryLimit is how many entries a flow's history keeps when
// Config.HistoryLimit is zero.
const DefaultHistoryLimit = 2000

func historyDir(flowID string) string { return historyPrefix + flowID + "/" }
func historyMetaKey(flowID string) string {
	return historyDir(flowID) + "meta"
}
func historyEntryKey(flowID string, seq int64) string {
	return fmt.Sprintf("%se/%020d", historyDir(flowID), seq)
}
func historyDropKey(flowID, tier string, seq int64) string {
	return fmt.Sprintf("%s%s/%020d", historyDir(flowID), tier, seq)
}

// HistoryEntry is one change in a flow's history.
type HistoryEntry struct {
	// Seq numbers the flow's entries from 1, without gaps except where
	// the bound dropped entries.
	Seq int64 `json:"seq"`
	// At is the engine's clock when the change committed.
	At   time.Time   `json:"at"`
	Kind HistoryKind `json:"kind"`
	// Summary says what happened in one line, for people.
	Summary string `json:"summary"`
	// By names who made the change when it is known: the author of a
	// gate decision, "operator" or the controller for a cancel request.
	By string `json:"by,omitempty"`
	// TaskID names the task the change is about, if any.
	TaskID string `json:"task_id,omitempty"`
	// Data holds the change's details as a JSON object (statuses,
	// revision, attempt, decision, ...); nil when there are none.
	Data json.RawMessage `json:"data,omitempty"`
}

// historyMeta is a flow history's bookkeeping record, written with every
// append: what an append needs to know, read with one point read (which
// etcd's store answers from its cache, and guards with the commit's
// compares) instead of scans of the history.
type historyMeta struct {
	// The earlier layout's meta also held the last seq and the count
	// kept ("last", "count"). No reader of either was released and a
	// later one stopped writing them, so a stored "last" may be stale:
	// they are neither read nor written.
	//
	// Dropped counts the entries the bound dropped.
	Dropped int64 `json:"dropped,omitempty"`
	// ProgressFrom and OrdinaryFrom are where the search for the oldest
	// progress entry, and for the oldest other droppable one, starts:
	// every entry of the tier before it is gone. They are kept for
	// versions that predate the queues below, which read only these.
	ProgressFrom int64 `json:"progress_from,omitempty"`
	OrdinaryFrom int64 `json:"ordinary_from,omitempty"`
	// LastSeq is the seq of the newest entry; 0 in a meta written by a
	// version that did not keep it, or before the first append.
	LastSeq int64 `json:"last_seq,omitempty"`
	// Progress and Ordinary are the drop tiers' oldest entries (see
	// tierQueue); nil in a meta written by a version that did not keep
	// them, whose ProgressFrom and OrdinaryFrom then say where to look.
	Progress *tierQueue `json:"progress,omitempty"`
	Ordinary *tierQueue `json:"ordinary,omitempty"`
}

// historyNote is what a write knows about its flow change that the flow
// record does not say: a kind that overrides the one read from the
// change, who made it, and details.
type historyNote struct {
	Kind    HistoryKind
	Summary string
	By      string
	Data    map[string]any
}

// explain attaches n to the next write of flow id in this transaction.
func (t *txn) explain(id string, n historyNote) {
	if t.notes == nil {
		t.notes = map[string]historyNote{}
	}
	t.notes[id] = n
}

// record appends e to flow flowID's history, numbering and stamping it,
// and drops the oldest droppable entries past the bound. The numbers it
// needs are in the history's meta, a point read; it scans the history
// only for the first entry, for a meta an older version wrote (once: it
// writes the meta), for
// an entry appended by a version that does not keep the meta's last seq
// (a gateway not yet upgraded on the same etcd), and to refill a drop
// tier's queue, once every historyQueueLen drops.
func (t *txn) record(flowID string, e HistoryEntry) error {
	meta, err := t.historyMeta(flowID)
	if err != nil {
		return err
	}
	last := meta.LastSeq
	if last == 0 {
		if last, err = lastHistorySeq(t.tx, flowID); err != nil {
			return err
		}
	}
	e.Seq, e.At = last+1, t.now
	err = t.create(historyEntryKey(flowID, e.Seq), e)
	if errors.Is(err, store.ErrKeyExists) {
		// Another writer appended without moving LastSeq.
		if last, err = lastHistorySeq(t.tx, flowID); err != nil {
			return err
		}
		e.Seq = last + 1
		err = t.create(historyEntryKey(flowID, e.Seq), e)
	}
	if err != nil {
		return err
	}
	meta.LastSeq = e.Seq
	queues := meta.queues()
	for _, q := range queues {
		q.appended(e.Seq, e.Kind.tier())
	}
	limit := int64(t.historyLimit)
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	for e.Seq-meta.Dropped > limit {
		dropped, err := t.dropOldest(flowID, e.Seq, queues)
		if err != nil {
			return err
		}
		if !dropped {
			break
		}
		meta.Dropped++
	}
	meta.ProgressFrom, meta.OrdinaryFrom = meta.Progress.from(), meta.Ordinary.from()
	return nil // the meta is written once, at the transaction's end (putHistoryMetas)
}

// putHistoryMetas writes the history metas this transaction changed,
// once each: a write that records a task's move and its flow's appends
// two entries or more to one history, and its meta need not be encoded
// and put after each.
func (t *txn) putHistoryMetas() error {
	for flowID, meta := range t.histMetas {
		if err := t.put(historyMetaKey(flowID), meta); err != nil {
			return err
		}
	}
	return nil
}

// lastHistorySeq returns the seq of flow flowID's newest history entry,
// 0 when it has none, by a scan.
func lastHistorySeq(tx store.ReadTx, flowID string) (int64, error) {
	var (
		last int64
		bad  error
	)
	err := tx.Scan(historyDir(flowID)+"e/", store.ScanOptions{Reverse: true, Limit: 1}, func(it store.Item) bool {
		if last, bad = strconv.ParseInt(lastSegment(it.Key), 10, 64); bad != nil {
			bad = &DamagedRecord{Key: it.Key, Reason: "its key holds no sequence number"}
		}
		return false
	})
	return last, errors.Join(err, bad)
}

// dropOldest deletes the oldest progress entry of flow flowID's history,
// else its oldest other droppable entry, and reports whether there was
// one. The entry just appended, seq newest, is never the one dropped: the
// latest progress is the one worth keeping.
func (t *txn) dropOldest(flowID string, newest int64, queues []*tierQueue) (bool, error) {
	for _, q := range queues {
		seq, err := t.oldestOfTier(flowID, q, newest)
		if err != nil {
			return false, err
		}
		if seq == 0 {
			continue
		}
		q.Seqs = q.Seqs[1:]
		if err := t.del(historyEntryKey(flowID, seq)); err != nil {
			return false, err
		}
		return true, t.del(historyDropKey(flowID, q.tier, seq))
	}
	return false, nil
}

// create puts v, encoded, at key, a key that must be new (see
// store.Create).
func (t *txn) create(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	t.wrote = true
	return store.Create(t.tx, key, b)
}

// historyMeta returns flow flowID's history meta as this transaction
// last changed it, reading and decoding it only at the first entry the
// transaction records for the flow: a write that records a task's and
// its flow's moves appends several entries to one history. Every meta
// it returns is written back at the transaction's end.
func (t *txn) historyMeta(flowID string) (*historyMeta, error) {
	if m := t.histMetas[flowID]; m != nil {
		return m, nil
	}
	meta, err := loadHistoryMeta(t.tx, flowID)
	if err != nil {
		return nil, err
	}
	if t.histMetas == nil {
		t.histMetas = map[string]*historyMeta{}
	}
	t.histMetas[flowID] = &meta
	return &meta, nil
}

func loadHistoryMeta(tx store.ReadTx, flowID string) (historyMeta, error) {
	var meta historyMeta
	it, err := tx.Get(historyMetaKey(flowID))
	switch {
	case errors.Is(err, store.ErrKeyNotFound):
		return meta, nil
	case err != nil:
		return meta, err
	}
	if err := json.Unmarshal(it.Value, &meta); err != nil {
		return meta, &DamagedRecord{Key: it.Key, Reason: "it does not decode: " + err.Error()}
	}
	return meta, nil
}

// pruneHistory deletes flow flowID's whole history.
func (t *txn) pruneHistory(flowID string) error {
	delete(t.histMetas, flowID)
	return t.deletePrefix(historyDir(flowID))
}

// HistoryPage is one page of a flow's history.
type HistoryPage struct {
	Entries []HistoryEntry `json:"entries"`
	// Next is the seq to pass as after for the following page: the last
	// entry's, or the after asked for when the page is empty.
	Next int64 `json:"next"`
	// Dropped counts the entries the bound has dropped from this flow's
	// history so far.
	Dropped int64 `json:"dropped,omitempty"`
	// Status is the flow's status when the page was read, so a follower
	// knows when the flow has ended.
	Status sdk.FlowStatus `json:"status"`
}

// MaxHistoryPage is the most entries one History call returns.
const MaxHistoryPage = 1000

// History returns up to limit entries of flow id's history with seq
// greater than after, oldest first. A zero or too large limit means
// MaxHistoryPage. A flow that does not exist (or was pruned, with its
// history) fails with ErrNotFound; a negative after or limit with
// ErrInvalid.
func (e *Engine) History(id string, after int64, limit int) (HistoryPage, error) {
	if after < 0 || limit < 0 {
		return HistoryPage{}, invalid("history after %d and limit %d must not be negative", after, limit)
	}
	if limit == 0 || limit > MaxHistoryPage {
		limit = MaxHistoryPage
	}
	var page HistoryPage
	err := e.view(func(tx store.ReadTx) error {
		page = HistoryPage{Next: after, Entries: []HistoryEntry{}}
		f, err := loadFlow(tx, id)
		if err != nil {
			return err
		}
		meta, err := loadHistoryMeta(tx, id)
		if err != nil {
			return err
		}
		page.Status, page.Dropped = f.Status, meta.Dropped
		var decodeErr error
		opts := store.ScanOptions{Limit: limit}
		if after > 0 {
			opts.After = historyEntryKey(id, after)
		}
		err = tx.Scan(historyDir(id)+"e/", opts, func(it store.Item) bool {
			var en HistoryEntry
			if decodeErr = json.Unmarshal(it.Value, &en); decodeErr != nil {
				decodeErr = &DamagedRecord{Key: it.Key, Reason: "it does not decode: " + decodeErr.Error()}
				return false
			}
			page.Entries = append(page.Entries, en)
			page.Next = en.Seq
			return true
		})
		return errors.Join(err, decodeErr)
	})
	return page, err
}
