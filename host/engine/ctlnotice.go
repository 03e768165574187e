package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// controllerNoticePrefix keys where the finish notification of each
// flow a controller drives goes: "ctlnotice/<controller>" holds an
// sdk.FinishNotify.
const controllerNoticePrefix = "ctlnotice/"

// SetControllerNotices records where the finish notification of every
// flow each controller drives goes (a controller's on_finish and
// on_finish_webhook in the gateway config), replacing what was recorded:
// m maps a controller's name to its target, and a controller not in m
// gets none. The gateway calls it when it starts. Because the targets are
// in the store, every writer (the gateway, or a command run with none)
// queues a controller's notice in the transaction that ends the flow, as
// it does a flow's own; a change to the config takes effect at the next
// start. It writes nothing when the store already holds m. An invalid
// target is refused, naming the controller, and nothing changes.
func (e *Engine) SetControllerNotices(m map[string]*sdk.FinishNotify) error {
	want := map[string]*sdk.FinishNotify{}
	for name, to := range m {
		if err := ValidateNotify(to); err != nil {
			return fmt.Errorf("plugins.%s: %w", name, err)
		}
		if to != nil {
			want[name] = to
		}
	}
	var have map[string]*sdk.FinishNotify
	err := e.view(func(tx store.ReadTx) (err error) {
		have, err = controllerNotices(tx)
		return err
	})
	if err != nil || maps.EqualFunc(have, want, func(a, b *sdk.FinishNotify) bool { return *a == *b }) {
		return err
	}
	return e.write(func(t *txn) error {
		// Read again in the write: a target another process recorded
		// since the view above is deleted too.
		have, err := controllerNotices(t.tx)
		if err != nil {
			return err
		}
		for name := range have {
			if want[name] == nil {
				if err := t.del(controllerNoticePrefix + name); err != nil {
					return err
				}
			}
		}
		for name, to := range want {
			if err := t.put(controllerNoticePrefix+name, to); err != nil {
				return err
			}
		}
		return nil
	})
}

// controllerNotices reads the recorded targets, by controller.
func controllerNotices(tx store.ReadTx) (map[string]*sdk.FinishNotify, error) {
	out := map[string]*sdk.FinishNotify{}
	var bad error
	err := tx.Scan(controllerNoticePrefix, store.ScanOptions{}, func(it store.Item) bool {
		var to sdk.FinishNotify
		if bad = json.Unmarshal(it.Value, &to); bad != nil {
			return false
		}
		out[it.Key[len(controllerNoticePrefix):]] = &to
		return true
	})
	return out, errors.Join(err, bad)
}

// controllerNotice returns where the finish notifications of controller
// name's flows go, or nil for nowhere (and for no controller).
func (t *txn) controllerNotice(name string) (*sdk.FinishNotify, error) {
	if name == "" {
		return nil, nil
	}
	it, err := t.tx.Get(controllerNoticePrefix + name)
	if errors.Is(err, store.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var to sdk.FinishNotify
	if err := json.Unmarshal(it.Value, &to); err != nil {
		return nil, fmt.Errorf("read the finish notification of controller %s: %w", name, err)
	}
	return &to, nil
}
