package engine

import (
	"strconv"
	"strings"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// FoldTaskFinished returns the event to hand a controller that folds
// task.finished events (sdk.CapabilityFoldTaskFinished) in place of head,
// the head of flow flowID's outbox: the last of the task.finished events
// queued back to back from head on, or head itself when it is not one or
// none follows it. Acknowledge the fold with AckThrough.
func (e *Engine) FoldTaskFinished(head *sdk.Event) (*sdk.Event, error) {
	if head.Type != sdk.EventTaskFinished {
		return head, nil
	}
	evs, err := e.Events(head.FlowID)
	if err != nil {
		return nil, err
	}
	last := head
	for _, ev := range evs {
		switch {
		case ev.Seq <= head.Seq:
			continue
		case ev.Type != sdk.EventTaskFinished:
			return last, nil
		}
		last = ev
	}
	return last, nil
}

// AckThrough removes every event of flow flowID up to and including seq
// from the outbox, in one transaction, once its controller handled the
// last of a fold (FoldTaskFinished); see AckEvent. Events already gone
// are not an error.
func (e *Engine) AckThrough(flowID string, seq int64) error {
	return e.write(func(t *txn) error {
		head, err := headEvent(t.tx, flowID)
		if err != nil || head == nil {
			return err
		}
		var keys []string
		prefix := eventPrefix + flowID + "/"
		err = t.tx.Scan(prefix, store.ScanOptions{}, func(it store.Item) bool {
			n, err := strconv.ParseInt(strings.TrimPrefix(it.Key, prefix), 10, 64)
			if err != nil || n > seq {
				return false
			}
			keys = append(keys, it.Key)
			return true
		})
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := t.del(k); err != nil {
				return err
			}
		}
		if err := t.requeueHead(flowID, head); err != nil {
			return err
		}
		return t.dropStreamIfDone(flowID)
	})
}
