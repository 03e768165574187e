package pluginhost

import (
	"context"
	"sync"
)

// maxOwned bounds the flows a host remembers as its controller's; past
// it the set is emptied, and each flow is checked once more.
const maxOwned = 1024

// ownedFlows is the set of flows a host has seen its controller drive.
// A flow's controller and sync mode are set when it is created and never
// change, and flow ids are never reused, so a flow found the
// controller's once stays the controller's: the calls of a pass (list
// the tasks, then advance) need not load the flow again to check it,
// a load that decodes the flow's whole record, state and all.
type ownedFlows struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

func (o *ownedFlows) has(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.ids[id]
	return ok
}

func (o *ownedFlows) add(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.ids == nil || len(o.ids) >= maxOwned {
		o.ids = make(map[string]struct{}, 64)
	}
	o.ids[id] = struct{}{}
}

// owns refuses, as own does, a flow another controller drives, loading
// it only when the host has not yet seen it be the controller's. It
// guards only calls whose engine write loads the flow itself, so a flow
// gone since it was seen is still refused there (sdk.ErrNotFound).
func (h *host) owns(ctx context.Context, flowID string) error {
	if err := h.check(); err != nil {
		return err
	}
	if h.owned.has(flowID) {
		return nil
	}
	_, err := h.own(ctx, flowID)
	return err
}
