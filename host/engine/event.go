package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// appendEvent adds an event to the outbox of managed flow f with the flow's
// next sequence number, in the caller's transaction. Flows without a
// controller have no outbox; the call is a no-op for them.
func (t *txn) appendEvent(f *sdk.Flow, typ sdk.EventType, taskID string, data json.RawMessage) error {
	if f.SyncMode != sdk.SyncManaged {
		return nil
	}
	seq, err := lastSeq(t.tx, f.ID)
	if err != nil {
		return err
	}
	seq++
	if err := t.putRaw(seqPrefix+f.ID, []byte(strconv.FormatInt(seq, 10))); err != nil {
		return err
	}
	return t.put(eventKey(f.ID, seq), &sdk.Event{FlowID: f.ID, Seq: seq, Type: typ, TaskID: taskID, Data: data, CreatedAt: t.now})
}

func lastSeq(tx store.ReadTx, flowID string) (int64, error) {
	it, err := tx.Get(seqPrefix + flowID)
	if errors.Is(err, store.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(it.Value), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("event sequence of flow %s is damaged: %w", flowID, err)
	}
	return n, nil
}

// Events returns the undelivered events of flow flowID in sequence order.
func (e *Engine) Events(flowID string) ([]*sdk.Event, error) {
	var out []*sdk.Event
	err := e.view(func(tx store.ReadTx) error {
		var decodeErr error
		err := tx.Scan(eventPrefix+flowID+"/", store.ScanOptions{}, func(it store.Item) bool {
			ev := new(sdk.Event)
			if decodeErr = json.Unmarshal(it.Value, ev); decodeErr != nil {
				return false
			}
			out = append(out, ev)
			return true
		})
		if err != nil {
			return err
		}
		return decodeErr
	})
	return out, err
}

// AckEvent removes event seq of flow flowID from the outbox once its
// controller handled it. Acknowledging an event that is already gone is not
// an error: delivery is at least once.
func (e *Engine) AckEvent(flowID string, seq int64) error {
	return e.write(func(t *txn) error {
		return t.del(eventKey(flowID, seq))
	})
}
