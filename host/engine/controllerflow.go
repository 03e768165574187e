package engine

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// DefaultMaxActiveFlows is how many active flows one controller may have
// created when it creates another, unless Config.MaxActiveFlows says otherwise: a
// controller that reacts to the outside world (a watched directory, a
// webhook) cannot flood the gateway with flows faster than they end.
const DefaultMaxActiveFlows = 1000

// CreateControllerFlow creates the managed flow controller asks for
// (sdk.Host.CreateFlow), driven by controller, or returns the flow
// req.IdempotencyKey already names for it (created false). The key is
// written with the flow, its flow.started event and its indexes in one
// transaction: a repeat after a crash on either side finds the flow, and
// the event is in the outbox only once the flow is durable. A parent the
// controller does not drive is refused (sdk.ErrNotManaged); a controller
// with Config.MaxActiveFlows active flows that it created itself is
// refused with sdk.ErrResourceExhausted naming the cap, and nothing is
// written. Flows others started for it do not count: the cap bounds what
// a controller reacting to the outside world can start on its own.
func (e *Engine) CreateControllerFlow(controller string, req sdk.FlowRequest) (flow *sdk.Flow, created bool, err error) {
	key := strings.TrimSpace(req.IdempotencyKey)
	if key == "" {
		return nil, false, invalid("CreateFlow needs an idempotency key: derive it from what the flow is for, so that asking again returns the same flow")
	}
	parent := strings.TrimSpace(req.ParentFlowID)
	in := CreateFlowInput{OwnerKey: req.OwnerKey, ControllerID: controller, Goal: req.Goal, State: req.State, Origin: "controller " + controller}
	if err := in.normalize(); err != nil {
		return nil, false, err
	}
	if err := checkKeyParts(map[string]string{"idempotency key": key}); err != nil {
		return nil, false, err
	}
	err = e.write(func(t *txn) error {
		created = false // a write that runs again starts afresh
		if flow, err = controllerFlow(t.tx, in.ControllerID, key); flow != nil || err != nil {
			return err
		}
		if parent != "" {
			if err := checkParent(t.tx, in.ControllerID, parent); err != nil {
				return err
			}
		}
		if err := e.admit(t.tx, in.ControllerID); err != nil {
			return err
		}
		flow, err = e.createFlow(t, in, func(f *sdk.Flow) {
			f.IdempotencyKey, f.Labels, f.ParentFlowID = key, maps.Clone(req.Labels), parent
		})
		if err != nil {
			return err
		}
		created = true
		return t.putRaw(flowIdemKey(in.ControllerID, key), []byte(flow.ID))
	})
	return flow, created, err
}

// controllerFlow returns the flow controller's idempotency key names, or
// nil.
func controllerFlow(tx store.ReadTx, controller, key string) (*sdk.Flow, error) {
	it, err := tx.Get(flowIdemKey(controller, key))
	if errors.Is(err, store.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return loadFlow(tx, string(it.Value))
}

// checkParent refuses a parent flow that controller does not drive.
func checkParent(tx store.ReadTx, controller, id string) error {
	p, err := loadFlow(tx, id)
	if err != nil {
		return err
	}
	if p.SyncMode != sdk.SyncManaged || p.ControllerID != controller {
		return fmt.Errorf("%w: parent flow %s is driven by %q, not by controller %s", sdk.ErrNotManaged, id, p.ControllerID, controller)
	}
	return nil
}

// admit refuses a new flow for controller when it has its cap of active
// flows it created itself. It counts the entries of their index, up to
// the cap.
func (e *Engine) admit(tx store.ReadTx, controller string) error {
	limit, active := e.cfg.MaxActiveFlows, 0
	err := tx.Scan(createdKey(controller), store.ScanOptions{Limit: limit}, func(store.Item) bool {
		active++
		return true
	})
	if err != nil {
		return err
	}
	if active >= limit {
		return fmt.Errorf("%w: controller %s has %d active flows it created, its cap (max_active_flows in the gateway config); wait for some to end, or raise the cap",
			sdk.ErrResourceExhausted, controller, limit)
	}
	return nil
}
