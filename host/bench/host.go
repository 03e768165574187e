package bench

import (
	"context"
	"fmt"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// inprocHost is the gateway side of a controller's callbacks when the
// controller runs in this process: the same engine work as the host a
// plugin instance gets (host/plugins, unexported there) for the calls a
// one-step pipeline makes: a read of the flow to refuse one the
// controller does not drive, then the engine call.
type inprocHost struct {
	sdk.Host // nil: a one-step pipeline calls no other method
	eng      *engine.Engine
	name     string
}

func (h inprocHost) own(flowID string) (*sdk.Flow, error) {
	f, err := h.eng.GetFlow(flowID)
	if err != nil {
		return nil, err
	}
	if f.SyncMode != sdk.SyncManaged || f.ControllerID != h.name {
		return nil, fmt.Errorf("%w: flow %s is driven by %q, not by controller %s", sdk.ErrNotManaged, flowID, f.ControllerID, h.name)
	}
	return f, nil
}

func (h inprocHost) GetFlow(_ context.Context, flowID string) (*sdk.Flow, error) {
	return h.own(flowID)
}

func (h inprocHost) ListTasks(_ context.Context, flowID string) ([]*sdk.Task, error) {
	if _, err := h.own(flowID); err != nil {
		return nil, err
	}
	return h.eng.FlowTasks(flowID)
}

func (h inprocHost) CreateTask(_ context.Context, req sdk.TaskRequest) (*sdk.Task, bool, error) {
	if _, err := h.own(req.FlowID); err != nil {
		return nil, false, err
	}
	rt := req.Runtime
	if rt == "" {
		rt = h.name
	}
	return h.eng.CreateTask(engine.CreateTaskInput{
		FlowID: req.FlowID, Runtime: rt, Label: req.Label, Spec: req.Spec, IdempotencyKey: req.IdempotencyKey,
	})
}

func (h inprocHost) UpdateFlow(_ context.Context, flowID string, expected int64, u sdk.FlowUpdate) (*sdk.Flow, error) {
	if _, err := h.own(flowID); err != nil {
		return nil, err
	}
	return h.eng.UpdateFlow(flowID, expected, engine.FlowPatch{
		State: u.State, Wait: u.Wait, CurrentStep: u.CurrentStep, BlockedTaskID: u.BlockedTaskID, BlockedSummary: u.BlockedSummary,
	})
}

func (h inprocHost) Resume(_ context.Context, flowID string, expected int64, r sdk.ResumeRequest) (*sdk.Flow, error) {
	if _, err := h.own(flowID); err != nil {
		return nil, err
	}
	return h.eng.Resume(flowID, expected, engine.ResumeInput{Status: r.Status, CurrentStep: r.CurrentStep, State: r.State})
}
