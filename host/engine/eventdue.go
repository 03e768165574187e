package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// The delivery queue. Each flow whose outbox has a head event that is not
// parked has one entry "evdue/<due>/<flow>/<seq>" (an empty value), due at
// the head's RetryAt, or at its CreatedAt before any failed delivery. It
// is written in the transaction that changes the head (an event queued
// into an empty outbox, an acknowledgement, a failed delivery, a park or
// an unpark, a prune), so a delivery pass (NextDeliveries) reads the
// entries that are due, in due order, and stops when it has enough: it
// costs what it delivers, not what waits. Like wakedue/, it is a queue,
// not an idx/ index.
const eventDue = "evdue/"

// dueKey is the queue entry of head event ev, or "" for none (no head, or
// a parked one).
func dueKey(ev *sdk.Event) string {
	if ev == nil || ev.Parked {
		return ""
	}
	at := ev.RetryAt
	if at.IsZero() {
		at = ev.CreatedAt
	}
	return fmt.Sprintf("%s%s/%s/%020d", eventDue, timeKey(at), ev.FlowID, ev.Seq)
}

// parseDueKey returns the flow and sequence a queue entry names.
func parseDueKey(key string) (flowID string, seq int64, ok bool) {
	parts := strings.Split(strings.TrimPrefix(key, eventDue), "/")
	if len(parts) != 3 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(parts[2], 10, 64)
	return parts[1], seq, err == nil
}

// requeueHead moves flowID's queue entry from before, the head of its
// outbox before this transaction changed it, to the head it has now.
func (t *txn) requeueHead(flowID string, before *sdk.Event) error {
	after, err := headEvent(t.tx, flowID)
	if err != nil {
		return err
	}
	old, next := dueKey(before), dueKey(after)
	if old == next {
		return nil
	}
	if old != "" {
		if err := t.del(old); err != nil {
			return err
		}
	}
	if next == "" {
		return nil
	}
	return t.putRaw(next, nil)
}

// dropDue deletes the queue entry of flowID's head, before its outbox
// is deleted.
func (t *txn) dropDue(flowID string) error {
	head, err := headEvent(t.tx, flowID)
	if k := dueKey(head); err == nil && k != "" {
		err = t.del(k)
	}
	return err
}

// dueBatch bounds the queue entries one transaction of IndexOutbox
// writes, within etcd's 128 operations (each reads its flow's head and
// writes or deletes one entry).
const dueBatch = 40

// IndexOutbox makes the delivery queue match the outboxes: it adds the
// entry of every head that lacks one (an outbox written before the queue
// existed) and deletes entries that name no head. It returns how many
// entries it changed. A deliverer calls it once when it starts; it reads
// the whole outbox, so it is no per-pass call.
func (e *Engine) IndexOutbox() (int, error) {
	var want, have map[string]bool
	err := e.view(func(tx store.ReadTx) error {
		want, have = map[string]bool{}, map[string]bool{}
		if err := tx.Scan(eventDue, store.ScanOptions{}, func(it store.Item) bool {
			have[it.Key] = true
			return true
		}); err != nil {
			return err
		}
		return scanHeads(tx, func(head *sdk.Event) {
			if k := dueKey(head); k != "" {
				want[k] = true
			}
		})
	})
	if err != nil {
		return 0, err
	}
	var fix []string
	for k := range want {
		if !have[k] {
			fix = append(fix, k)
		}
	}
	for k := range have {
		if !want[k] {
			fix = append(fix, k)
		}
	}
	changed := 0
	for len(fix) > 0 {
		batch := fix[:min(len(fix), dueBatch)]
		fix = fix[len(batch):]
		if err := e.write(func(t *txn) error {
			for _, k := range batch {
				flowID, _, _ := parseDueKey(k)
				head, err := headEvent(t.tx, flowID)
				if err != nil {
					return err
				}
				switch {
				case dueKey(head) == k:
					err = t.putRaw(k, nil)
				default:
					err = t.del(k)
				}
				if err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return changed, err
		}
		changed += len(batch)
	}
	return changed, nil
}

// scanHeads calls fn with the head event of every outbox.
func scanHeads(tx store.ReadTx, fn func(head *sdk.Event)) error {
	var (
		lastFlow string
		bad      error
	)
	err := tx.Scan(eventPrefix, store.ScanOptions{}, func(it store.Item) bool {
		flowID, _, _ := strings.Cut(strings.TrimPrefix(it.Key, eventPrefix), "/")
		if flowID == lastFlow {
			return true
		}
		lastFlow = flowID
		ev, err := decodeRecord[sdk.Event](it)
		if err != nil {
			bad = err
			return false
		}
		fn(ev)
		return true
	})
	if err != nil {
		return err
	}
	return bad
}
