package pluginhost

import (
	"github.com/flowgate/flowgate/host/engine"
)

// skip is the deliverer's filter of the delivery queue: the flows whose
// delivery is in flight (busy), and, with a Member, the streams another
// live member holds.
func (d *Deliverer) skip(busy map[string]bool) func(flowID, holder string) bool {
	return func(flowID, holder string) bool {
		if busy[flowID] {
			return true
		}
		return d.cfg.Member != "" && holder != "" && holder != d.cfg.Member && d.cfg.Live(holder)
	}
}

// held narrows due to the deliveries of the event streams this gateway
// (DeliveryConfig.Member) holds or claims now. It claims streams that are
// free (no holder, or a holder no longer live) only for the deliveries it
// has room for, so that gateways share new streams instead of one taking
// them all; a stream another live member holds is left to it. A gateway
// whose own membership has ended delivers nothing: its streams are the
// others' now.
func (d *Deliverer) held(due []engine.Delivery, busy map[string]bool) ([]engine.Delivery, error) {
	if !d.cfg.Live(d.cfg.Member) {
		return nil, nil
	}
	d.mu.Lock()
	room := d.cfg.Concurrency - len(d.inflight)
	d.mu.Unlock()
	var out []engine.Delivery
	var free []string
	byFlow := map[string]engine.Delivery{}
	for _, del := range due {
		id := del.Event.FlowID
		switch {
		case busy[id]:
		case del.Holder == d.cfg.Member:
			out = append(out, del)
			room--
		case (del.Holder == "" || !d.cfg.Live(del.Holder)) && len(free) < room:
			free = append(free, id)
			byFlow[id] = del
		}
	}
	if len(free) == 0 || room <= 0 {
		return out, nil
	}
	won, err := d.eng.ClaimStreams(d.cfg.Member, free[:min(len(free), room)], d.cfg.Live)
	if err != nil {
		return out, err
	}
	for _, id := range won {
		out = append(out, byFlow[id])
	}
	return out, nil
}
