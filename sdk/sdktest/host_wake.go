package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// wakeEntry is one wake a controller set.
type wakeEntry struct {
	woken sdk.Woken
	fired bool
}

// WakeAt implements sdk.Host by the gateway's rules: the flow must exist
// and not have ended, the key must not be empty, and a key already set
// (pending or fired) keeps its first time. The wake fires when the test
// calls FireWakes (or Harness.FireWakes) with a time at or after it.
func (h *Host) WakeAt(ctx context.Context, flowID string, at time.Time, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if key == "" {
		return invalid("a wake needs a key; name what it is for, such as \"reminder\"")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := h.loadFlow(flowID)
	if err != nil {
		return err
	}
	if f.Status.Terminal() {
		return fmt.Errorf("%w: flow %s is already %s; a wake would never fire", sdk.ErrTerminal, flowID, f.Status)
	}
	if h.wakes == nil {
		h.wakes = map[string]map[string]*wakeEntry{}
	}
	if h.wakes[flowID] == nil {
		h.wakes[flowID] = map[string]*wakeEntry{}
	}
	if _, set := h.wakes[flowID][key]; !set {
		h.wakes[flowID][key] = &wakeEntry{woken: sdk.Woken{Key: key, At: at.UTC().Truncate(time.Millisecond)}}
	}
	return nil
}

// Wakes returns the wakes of flow flowID that have not fired, earliest
// first.
func (h *Host) Wakes(flowID string) []sdk.Woken {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []sdk.Woken
	for _, w := range h.wakes[flowID] {
		if !w.fired {
			out = append(out, w.woken)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// FireWakes fires every wake due at now, as the gateway does when its
// clock reaches them: each queues one flow.woken event (data sdk.Woken) on
// its flow, unless the flow has ended. It returns the ids of the flows
// that got an event; Harness.FireWakes also delivers them.
func (h *Host) FireWakes(now time.Time) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var flows []string
	for flowID, byKey := range h.wakes {
		var due []*wakeEntry
		for _, w := range byKey {
			if !w.fired && !w.woken.At.After(now) {
				due = append(due, w)
			}
		}
		sort.Slice(due, func(i, j int) bool { return due[i].woken.At.Before(due[j].woken.At) })
		queued := false
		for _, w := range due {
			w.fired = true
			f, err := h.loadFlow(flowID)
			if err != nil || f.Status.Terminal() {
				continue
			}
			data, _ := json.Marshal(w.woken) // a Woken always encodes
			h.appendEvent(flowID, sdk.EventFlowWoken, "", data)
			queued = true
		}
		if queued {
			flows = append(flows, flowID)
		}
	}
	sort.Strings(flows)
	return flows
}
