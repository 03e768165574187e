package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
)

// NewFlow makes a managed flow of controller controllerID, queued at
// revision 1 (a new flow has been written once, as in the gateway's
// store), and queues flow.started for it. state, if not nil, must be
// JSON; nil leaves it absent.
func (h *Host) NewFlow(controllerID, goal string, state json.RawMessage) (*sdk.Flow, error) {
	if strings.TrimSpace(controllerID) == "" || strings.TrimSpace(goal) == "" {
		return nil, invalid("a managed flow needs a controller id and a goal")
	}
	if err := checkJSON("state", state); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t := now()
	f := &sdk.Flow{
		ID: h.nextID("flow"), SyncMode: sdk.SyncManaged, OwnerKey: ownerKey,
		ControllerID: strings.TrimSpace(controllerID), Status: sdk.FlowQueued,
		Goal: strings.TrimSpace(goal), State: state, NotifyPolicy: "done_only",
		Revision: 1, CreatedAt: t, UpdatedAt: t,
	}
	f.ChainID = f.ID
	h.putFlow(f)
	h.appendEvent(f.ID, sdk.EventFlowStarted, "", nil)
	return f, nil
}

// GetFlow implements sdk.Host.
func (h *Host) GetFlow(ctx context.Context, flowID string) (*sdk.Flow, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.loadFlow(flowID)
}

// UpdateFlow implements sdk.Host.
func (h *Host) UpdateFlow(ctx context.Context, flowID string, expected int64, u sdk.FlowUpdate) (*sdk.Flow, error) {
	if err := checkJSON("state", u.State); err != nil {
		return nil, err
	}
	if err := checkJSON("wait", u.Wait); err != nil {
		return nil, err
	}
	return h.guarded(ctx, flowID, expected, func(f *sdk.Flow) error {
		flowrule.Update(f, u)
		return nil
	})
}

// SetWaiting implements sdk.Host: blocked when a blocking task or summary
// is given, else waiting.
func (h *Host) SetWaiting(ctx context.Context, flowID string, expected int64, w sdk.WaitRequest) (*sdk.Flow, error) {
	if err := checkJSON("state", w.State); err != nil {
		return nil, err
	}
	if err := checkJSON("wait", w.Wait); err != nil {
		return nil, err
	}
	return h.guarded(ctx, flowID, expected, func(f *sdk.Flow) error {
		return flowrule.Park(f, w, move)
	})
}

// Resume implements sdk.Host as the engine does: a queued flow starts (or
// stays queued) with no event; a waiting or blocked one resumes and queues
// flow.resumed with {"status"}. Either way the wait is cleared to JSON null.
func (h *Host) Resume(ctx context.Context, flowID string, expected int64, r sdk.ResumeRequest) (*sdk.Flow, error) {
	if _, err := flowrule.ResumeStatus(r); err != nil {
		return nil, err
	}
	if err := checkJSON("state", r.State); err != nil {
		return nil, err
	}
	return h.guarded(ctx, flowID, expected, func(f *sdk.Flow) error {
		data, err := flowrule.Resume(f, r, move)
		if err != nil || data == nil {
			return err // data is nil when a queued flow starts: nobody waited to be told
		}
		h.appendEvent(f.ID, sdk.EventFlowResumed, "", data)
		return nil
	})
}

// Finish implements sdk.Host.
func (h *Host) Finish(ctx context.Context, flowID string, expected int64, e sdk.EndRequest) (*sdk.Flow, error) {
	return h.end(ctx, flowID, expected, sdk.FlowSucceeded, e)
}

// Fail implements sdk.Host.
func (h *Host) Fail(ctx context.Context, flowID string, expected int64, e sdk.EndRequest) (*sdk.Flow, error) {
	return h.end(ctx, flowID, expected, sdk.FlowFailed, e)
}

func (h *Host) end(ctx context.Context, flowID string, expected int64, to sdk.FlowStatus, e sdk.EndRequest) (*sdk.Flow, error) {
	if err := checkJSON("state", e.State); err != nil {
		return nil, err
	}
	if err := flowrule.CheckOutput(e.Output); err != nil {
		return nil, err
	}
	return h.guarded(ctx, flowID, expected, func(f *sdk.Flow) error {
		return flowrule.End(f, to, e, move)
	})
}

// RequestCancel implements sdk.Host as the engine does: the first request
// queues flow.cancel_requested, queued tasks are cancelled at once (each
// queues task.finished), running tasks are asked to stop, and the flow is
// cancelled when no task is left active, else when the last one finishes.
// A repeated request changes nothing and keeps the revision.
func (h *Host) RequestCancel(ctx context.Context, flowID string, expected int64) (*sdk.Flow, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := h.expect(flowID, expected)
	if err != nil {
		return nil, err
	}
	if f.Status.Terminal() {
		return nil, fmt.Errorf("%w: flow %s is already %s; nothing to cancel", sdk.ErrTerminal, f.ID, f.Status)
	}
	t := now()
	changed := !f.CancelRequested()
	if changed {
		f.CancelRequestedAt = t
		h.appendEvent(f.ID, sdk.EventFlowCancelRequested, "", nil)
	}
	active := 0
	for _, id := range h.flowTasks[f.ID] {
		task, err := h.loadTask(id)
		if err != nil {
			return nil, err
		}
		if !task.Status.Active() {
			continue
		}
		h.cancelTask(task)
		if task.Status.Active() {
			active++
		}
		h.putTask(task)
	}
	if active == 0 {
		if err := move(f, sdk.FlowCancelled); err != nil {
			return nil, err
		}
		changed = true
	}
	if changed {
		h.saveFlow(f)
	}
	return f, nil
}
