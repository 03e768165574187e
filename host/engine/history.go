package engine

import (
	"encoding/json"
	"errors"
	"fmt"
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
//	meta       historyMeta: the last sequence number, the count kept, the count dropped
//	e/<seq>    one HistoryEntry
//	p/<seq>    empty: entry seq is progress, dropped first
//	o/<seq>    empty: entry seq is ordinary, dropped once no progress is left
//
// Milestones and decisions (see HistoryKind.Kept) get neither drop mark
// and are never dropped.
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

// historyMeta is a flow history's bookkeeping record.
type historyMeta struct {
	Last    int64 `json:"last"`
	Count   int   `json:"count"`
	Dropped int64 `json:"dropped,omitempty"`
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
// and drops the oldest droppable entries past the bound.
func (t *txn) record(flowID string, e HistoryEntry) error {
	meta, err := loadHistoryMeta(t.tx, flowID)
	if err != nil {
		return err
	}
	meta.Last++
	meta.Count++
	e.Seq, e.At = meta.Last, t.now
	if err := t.put(historyEntryKey(flowID, e.Seq), e); err != nil {
		return err
	}
	if tier := e.Kind.tier(); tier != "" {
		if err := t.putRaw(historyDropKey(flowID, tier, e.Seq), nil); err != nil {
			return err
		}
	}
	limit := t.historyLimit
	if limit <= 0 {
		limit = DefaultHistoryLimit
	}
	for meta.Count > limit {
		dropped, err := t.dropOldest(flowID, e.Seq)
		if err != nil {
			return err
		}
		if !dropped {
			break
		}
		meta.Count--
		meta.Dropped++
	}
	return t.put(historyMetaKey(flowID), meta)
}

// dropOldest deletes the oldest progress entry of flow flowID's history,
// else its oldest ordinary entry, and reports whether there was one. The
// entry just appended, seq newest, is never the one dropped: the latest
// progress is the one worth keeping.
func (t *txn) dropOldest(flowID string, newest int64) (bool, error) {
	last := fmt.Sprintf("%020d", newest)
	for _, tier := range []string{tierProgress, tierOrdinary} {
		var key string
		err := t.tx.Scan(historyDir(flowID)+tier+"/", store.ScanOptions{Limit: 2}, func(it store.Item) bool {
			if lastSegment(it.Key) == last {
				return true
			}
			key = it.Key
			return false
		})
		if err != nil {
			return false, err
		}
		if key == "" {
			continue
		}
		if err := t.del(key); err != nil {
			return false, err
		}
		return true, t.del(historyDir(flowID) + "e/" + lastSegment(key))
	}
	return false, nil
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
func (t *txn) pruneHistory(flowID string) error { return t.deletePrefix(historyDir(flowID)) }

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
