package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

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
	t.changes = append(t.changes, Change{Kind: EventQueued, FlowID: f.ID})
	head, err := headEvent(t.tx, f.ID)
	if err != nil {
		return err
	}
	if err := t.put(eventKey(f.ID, seq), &sdk.Event{FlowID: f.ID, Seq: seq, Type: typ, TaskID: taskID, Data: data, CreatedAt: t.now}); err != nil {
		return err
	}
	if head != nil {
		return nil // the new event waits behind the head
	}
	return t.requeueHead(f.ID, nil)
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
// controller handled it, and the flow's stream claim with the last event
// of an ended flow (see ClaimStreams). Acknowledging an event that is already gone is not
// an error: delivery is at least once.
func (e *Engine) AckEvent(flowID string, seq int64) error {
	return e.write(func(t *txn) error {
		head, err := headEvent(t.tx, flowID)
		if err != nil {
			return err
		}
		return t.ack(flowID, seq, head)
	})
}

// ack removes event seq of flow flowID from its outbox, head being the
// outbox's head before; see AckEvent.
func (t *txn) ack(flowID string, seq int64, head *sdk.Event) error {
	if err := t.del(eventKey(flowID, seq)); err != nil {
		return err
	}
	if err := t.requeueHead(flowID, head); err != nil {
		return err
	}
	return t.dropStreamIfDone(flowID)
}

// ackHandled acknowledges event seq of flow flowID in the transaction of
// what its controller did for it, when it is the head of the outbox (the
// event in delivery) and not parked; see Advance. seq 0 asks for nothing.
func (t *txn) ackHandled(flowID string, seq int64) error {
	if seq == 0 {
		return nil
	}
	head, err := headEvent(t.tx, flowID)
	if err != nil || head == nil || head.Seq != seq || head.Parked {
		return err
	}
	if err := t.ack(flowID, seq, head); err != nil {
		return err
	}
	t.changes = append(t.changes, Change{Kind: EventAcked, FlowID: flowID, Seq: seq})
	return nil
}

// Delivery is the head event of one flow's outbox, ready to deliver, and
// the controller it goes to.
type Delivery struct {
	Event      *sdk.Event
	Controller string
	// Holder is the member whose claim the flow's event stream is under
	// (see ClaimStreams); empty when no one claims it.
	Holder string
}

// NextDeliveries returns, for up to limit flows (0: no limit), the
// oldest undelivered event whose retry time has come, skipping flows
// whose head event is parked and flows skip (if not nil) names, given
// the member holding the flow's stream ("" for none). Events of one flow
// are delivered one at a time, in order: only the head of each flow's
// outbox is returned. The heads come in the order they came due, from
// the delivery queue, so a pass reads what it returns and the flows it
// skips, never the events waiting behind a head or not yet due. A flow
// whose record cannot be read is skipped: delivery of the others goes on.
func (e *Engine) NextDeliveries(limit int, skip func(flowID, holder string) bool) ([]Delivery, error) {
	now := e.now()
	var out []Delivery
	err := e.view(func(tx store.ReadTx) error {
		out = nil
		var readErr error
		err := scanDue(tx, eventDue, now, func(it store.Item) bool {
			var d *Delivery
			if d, readErr = dueDelivery(tx, it.Key, skip); readErr != nil {
				return false
			}
			if d != nil {
				out = append(out, *d)
			}
			return limit <= 0 || len(out) < limit
		})
		if err != nil {
			return err
		}
		return readErr
	})
	return out, err
}

// dueDelivery is the delivery queue entry key names, or nil when it is
// skipped: skip names it, its head is gone, or its flow cannot be read.
func dueDelivery(tx store.ReadTx, key string, skip func(flowID, holder string) bool) (*Delivery, error) {
	flowID, seq, ok := parseDueKey(key)
	if !ok {
		return nil, nil
	}
	holder, err := streamHolder(tx, flowID)
	if err != nil || (skip != nil && skip(flowID, holder)) {
		return nil, err
	}
	ev, err := getRecord[sdk.Event](tx, eventKey(flowID, seq))
	if errors.Is(err, store.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// The controller is all a delivery needs of its flow: the head
	// spares decoding the state, the bulk of a managed flow's record.
	h, err := loadFlowHead(tx, flowID)
	if damaged(err) != nil {
		return nil, nil // its flow cannot be read; delivery of the others goes on
	}
	if err != nil {
		return nil, err
	}
	return &Delivery{Event: ev, Controller: h.ControllerID, Holder: holder}, nil
}

// PendingEvents counts undelivered events by controller.
func (e *Engine) PendingEvents() (map[string]int, error) {
	counts := map[string]int{}
	ctl := map[string]string{}
	err := e.view(func(tx store.ReadTx) error {
		var readErr error
		err := tx.Scan(eventPrefix, store.ScanOptions{}, func(it store.Item) bool {
			flowID := strings.TrimPrefix(it.Key, eventPrefix)
			flowID = flowID[:strings.IndexByte(flowID, '/')]
			c, ok := ctl[flowID]
			if !ok {
				f, err := loadFlow(tx, flowID)
				if damaged(err) != nil {
					f, err = &sdk.Flow{}, nil // counted under no controller
				}
				if err != nil {
					readErr = err
					return false
				}
				c, ctl[flowID] = f.ControllerID, f.ControllerID
			}
			counts[c]++
			return true
		})
		if err != nil {
			return err
		}
		return readErr
	})
	return counts, err
}

// EventFailure is a failed delivery of one event.
type EventFailure struct {
	// Error says why; it is kept on the event.
	Error string
	// RetryAfter is how long to wait before delivering the event again,
	// counted on the engine's clock from the moment the failure is
	// recorded (so the deliverer needs no clock of its own).
	RetryAfter time.Duration
	// Counted says the failure is the controller's (an error or no
	// answer) and counts toward blocking the flow; a controller that is
	// merely restarting does not count.
	Counted bool
	// Park stops delivery: the event is parked and the flow blocked with
	// Summary until someone unblocks it.
	Park    bool
	Summary string
}

// EventFailed records a failed delivery of event seq of flow flowID. An
// event that was acknowledged meanwhile is left alone. When f.Park parks
// the event, it returns the flow as the failure left it: blocked, or, when
// the flow had already ended, unchanged (a parked event of an ended flow
// stays until the flow is pruned). Otherwise the flow is nil.
func (e *Engine) EventFailed(flowID string, seq int64, f EventFailure) (*sdk.Flow, error) {
	var after *sdk.Flow
	err := e.write(func(t *txn) error {
		after = nil // a retried batch starts over
		ev, err := getRecord[sdk.Event](t.tx, eventKey(flowID, seq))
		if err != nil {
			if errors.Is(err, store.ErrKeyNotFound) {
				return nil
			}
			return err
		}
		before := *ev
		if f.Counted {
			ev.Deliveries++
		}
		ev.LastError, ev.RetryAt, ev.Parked = f.Error, t.now.Add(f.RetryAfter), f.Park
		if !f.Park {
			t.changes = append(t.changes, Change{Kind: EventQueued, FlowID: flowID})
		}
		if err := t.put(eventKey(flowID, seq), ev); err != nil {
			return err
		}
		if err := t.requeueHead(flowID, &before); err != nil {
			return err
		}
		if err := t.recordDeliveryFailure(ev, f.Counted || f.Park); err != nil {
			return err
		}
		if !f.Park {
			return nil
		}
		fl, err := loadFlow(t.tx, flowID)
		if err != nil {
			return err
		}
		if fl.Status.Terminal() {
			after = fl
			return nil
		}
		next := cloneFlow(fl)
		if err := t.move(next, sdk.FlowBlocked); err != nil {
			return err
		}
		next.BlockedSummary = f.Summary
		after = next
		return t.saveFlow(fl, next)
	})
	return after, err
}

// headEvent is the first event in flow flowID's outbox, the one delivery
// is at, or nil when the outbox is empty.
func headEvent(tx store.ReadTx, flowID string) (*sdk.Event, error) {
	var head *sdk.Event
	var readErr error
	err := tx.Scan(eventPrefix+flowID+"/", store.ScanOptions{Limit: 1}, func(it store.Item) bool {
		head = new(sdk.Event)
		readErr = json.Unmarshal(it.Value, head)
		return false
	})
	if err != nil || readErr != nil {
		return nil, errors.Join(err, readErr)
	}
	return head, nil
}

// unparkHead resumes delivery to a flow that leaves blocked: its parked
// head event is delivered again, its failure count reset.
func (t *txn) unparkHead(flowID string) error {
	head, err := headEvent(t.tx, flowID)
	if err != nil || head == nil || !head.Parked {
		return err
	}
	before := *head
	head.Parked, head.Deliveries, head.RetryAt = false, 0, time.Time{}
	t.changes = append(t.changes, Change{Kind: EventQueued, FlowID: flowID})
	if err := t.put(eventKey(flowID, head.Seq), head); err != nil {
		return err
	}
	return t.requeueHead(flowID, &before)
}
