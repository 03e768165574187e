package sdktest

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// SetController names the controller the sdk.Host calls come from: the
// controller of the flows CreateFlow makes, "sdktest" until set. A
// Harness sets it to its controller's Info name.
func (h *Host) SetController(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.controller = name
}

// SetMaxActiveFlows caps the active flows the controller created as the
// gateway's max_active_flows does: past n, CreateFlow is refused with
// sdk.ErrResourceExhausted. 0, the default, is no cap.
func (h *Host) SetMaxActiveFlows(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.maxActive = n
}

// CreateFlow implements sdk.Host by the gateway's rules: the key is
// required and returns the flow it named first, the parent must be a
// flow of the controller, and the cap is checked before anything is made.
func (h *Host) CreateFlow(ctx context.Context, req sdk.FlowRequest) (*sdk.Flow, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if err := checkFlowRequest(req); err != nil {
		return nil, false, err
	}
	req.IdempotencyKey = strings.TrimSpace(req.IdempotencyKey)
	h.mu.Lock()
	defer h.mu.Unlock()
	if id, ok := h.flowKeys[h.controller+"\x00"+req.IdempotencyKey]; ok {
		f, err := h.loadFlow(id)
		return f, false, err
	}
	if req.ParentFlowID != "" {
		p, err := h.loadFlow(req.ParentFlowID)
		if err != nil {
			return nil, false, err
		}
		if p.ControllerID != h.controller {
			return nil, false, fmt.Errorf("%w: parent flow %s is driven by %q, not by controller %s", sdk.ErrNotManaged, p.ID, p.ControllerID, h.controller)
		}
	}
	if h.maxActive > 0 && h.activeFlows() >= h.maxActive {
		return nil, false, fmt.Errorf("%w: controller %s has %d active flows it created, its cap (max_active_flows); wait for some to end", sdk.ErrResourceExhausted, h.controller, h.maxActive)
	}
	t := now()
	f := &sdk.Flow{
		ID: h.nextID("flow"), SyncMode: sdk.SyncManaged, OwnerKey: strings.TrimSpace(req.OwnerKey),
		ControllerID: h.controller, Status: sdk.FlowQueued, Goal: strings.TrimSpace(req.Goal),
		State: req.State, NotifyPolicy: "done_only", Revision: 1, CreatedAt: t, UpdatedAt: t,
		IdempotencyKey: req.IdempotencyKey, Labels: maps.Clone(req.Labels), ParentFlowID: req.ParentFlowID,
	}
	f.ChainID = f.ID
	h.putFlow(f)
	h.flowKeys[h.controller+"\x00"+req.IdempotencyKey] = f.ID
	h.appendEvent(f.ID, sdk.EventFlowStarted, "", nil)
	return f, true, nil
}

// CreatedFlow returns the flow the controller's CreateFlow made under
// key, so that a test can Drain its events; none is sdk.ErrNotFound.
func (h *Host) CreatedFlow(key string) (*sdk.Flow, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id, ok := h.flowKeys[h.controller+"\x00"+key]
	if !ok {
		return nil, fmt.Errorf("%w: controller %s created no flow under key %q", sdk.ErrNotFound, h.controller, key)
	}
	return h.loadFlow(id)
}

// checkFlowRequest refuses what the gateway refuses before it looks at
// the store.
func checkFlowRequest(req sdk.FlowRequest) error {
	switch {
	case strings.TrimSpace(req.IdempotencyKey) == "":
		return invalid("CreateFlow needs an idempotency key: derive it from what the flow is for, so that asking again returns the same flow")
	case strings.TrimSpace(req.Goal) == "":
		return invalid("CreateFlow needs a goal")
	case strings.TrimSpace(req.OwnerKey) == "":
		return invalid("CreateFlow needs an owner key")
	}
	return checkJSON("state", req.State)
}

// activeFlows counts the flows the controller created (CreateFlow) that
// have not ended.
func (h *Host) activeFlows() int {
	n := 0
	for id := range h.flows {
		if f, err := h.loadFlow(id); err == nil && f.ControllerID == h.controller && f.IdempotencyKey != "" && !f.Status.Terminal() {
			n++
		}
	}
	return n
}
