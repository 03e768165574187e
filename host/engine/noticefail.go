package engine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// noticeFailedPrefix keys the notices given up on:
// "noticefailed/<flow id>/<notice key>" ("-" for a notice of no flow),
// so that they go with their flow when it is pruned and the audit finds
// them without reading any history.
const noticeFailedPrefix = "noticefailed/"

// HistoryNotifyFailed: a notice to a destination was given up after its
// retry bound (data: key, dest, event, status, attempts, error).
const HistoryNotifyFailed HistoryKind = "notify.failed"

// FailedNotice is a notice the deliverer gave up on, kept for the audit
// (notify_failed) until its flow is pruned.
type FailedNotice struct {
	Key    string `json:"key"`
	FlowID string `json:"flow_id,omitempty"`
	TaskID string `json:"task_id,omitempty"`
	// Dest is the destination as it may be shown (redacted by the
	// deliverer: never a secret).
	Dest      string    `json:"dest"`
	Event     string    `json:"event,omitempty"`
	Status    string    `json:"status"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"last_error"`
	QueuedAt  time.Time `json:"queued_at"`
	FailedAt  time.Time `json:"failed_at"`
}

// NoticeGaveUp gives up on notice key after its last failed attempt
// (why, already free of secrets, as is dest: the destination as it may
// be shown). In one transaction it removes the notice from the outbox,
// keeps a FailedNotice that the audit reports, and appends a
// notify.failed entry to the flow's history (the notice's flow, or its
// task's). A notice already removed is not an error and changes
// nothing.
func (e *Engine) NoticeGaveUp(key, dest, why string) error {
	return e.write(func(t *txn) error {
		n, err := t.queuedNotice(key)
		if n == nil || err != nil {
			return err
		}
		why = clipReason(why)
		fn := FailedNotice{Key: key, FlowID: n.FlowID, TaskID: n.TaskID, Dest: dest, Event: n.Event, Status: n.Status,
			Attempts: n.Attempts + 1, LastError: why, QueuedAt: n.QueuedAt, FailedAt: t.now}
		if fn.FlowID == "" && fn.TaskID != "" {
			if task, err := loadTask(t.tx, fn.TaskID); err == nil {
				fn.FlowID = task.FlowID
			} else if !errors.Is(err, sdk.ErrNotFound) {
				return err
			}
		}
		if err := t.del(noticePrefix + key); err != nil {
			return err
		}
		dir := fn.FlowID
		if dir == "" {
			dir = "-"
		}
		if err := t.put(noticeFailedPrefix+dir+"/"+key, fn); err != nil {
			return err
		}
		if fn.FlowID == "" {
			return nil
		}
		if _, err := loadFlow(t.tx, fn.FlowID); errors.Is(err, sdk.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		summary := fmt.Sprintf("gave up sending %s to %s after %d attempts: %s", cmp.Or(fn.Event, fn.Status), dest, fn.Attempts, oneLine(why))
		return t.recordData(fn.FlowID, HistoryEntry{Kind: HistoryNotifyFailed, Summary: summary, TaskID: fn.TaskID},
			map[string]any{"key": key, "dest": dest, "event": fn.Event, "status": fn.Status, "attempts": fn.Attempts, "error": why})
	})
}

// FailedNotices returns the notices given up on (see NoticeGaveUp) that
// are still kept, in key order.
func (e *Engine) FailedNotices() ([]FailedNotice, error) {
	var out []FailedNotice
	err := e.view(func(tx store.ReadTx) error {
		out = nil
		var bad error
		err := tx.Scan(noticeFailedPrefix, store.ScanOptions{}, func(it store.Item) bool {
			var n FailedNotice
			if err := json.Unmarshal(it.Value, &n); err != nil {
				bad = fmt.Errorf("read failed notice %s: %w", it.Key, err)
				return false
			}
			out = append(out, n)
			return true
		})
		return errors.Join(err, bad)
	})
	return out, err
}

// QueueNotice queues n, a notice to one destination (n.Dest), by itself
// rather than in the transaction of a change: for a message whose cause
// is recorded elsewhere, such as a cron run's announcement. n.Key names
// it ("<run>/<what>"); a notice already queued under that key is kept,
// so queueing again is harmless. A notice without a key or a
// destination is refused.
func (e *Engine) QueueNotice(n Notice) error {
	if n.Key == "" || n.Dest == "" {
		return errors.New("a notice to queue needs a key and a destination")
	}
	return e.write(func(t *txn) error { return t.putNotice(n.Key, n.Status, n) })
}
