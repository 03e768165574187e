package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// update is the change of the flow that records the state the pass built
// and the step it stands at, with the plan showing that step running (and
// the tasks created with the change); write is false when neither the
// state nor the step changed (and u sets no field): the plan alone is no
// reason to write.
func (r *run) update(stepID string, created []sdk.TaskRequest) (u sdk.FlowUpdate, write bool, err error) {
	if err := r.st.fill(); err != nil || (r.flow.CurrentStep == stepID && !r.st.changed()) {
		return sdk.FlowUpdate{}, false, err
	}
	if err := r.keepPlan(passEnd{step: stepID, phase: sdk.PhaseRunning}, created); err != nil {
		return sdk.FlowUpdate{}, false, err
	}
	b, changed, err := r.st.marshal()
	if err != nil {
		return sdk.FlowUpdate{}, false, err
	}
	u.CurrentStep = &stepID
	if changed {
		u.State = b
	}
	return u, true, nil
}

// save writes the state the pass built and the step it stands at, when
// either changed.
func (r *run) save(ctx context.Context, stepID string) error {
	u, write, err := r.update(stepID, nil)
	if err != nil || !write {
		return err
	}
	f, err := r.host.UpdateFlow(ctx, r.flow.ID, r.flow.Revision, u)
	if err != nil {
		return err
	}
	r.flow = f
	return nil
}

// wait parks the flow at gate g. With a gate timeout, the gate's wait
// carries its deadline (Until), which the gateway's sweep enforces: the
// deadline is in the store, so it holds across restarts of the gateway
// and of this plugin. The first park at a step sets it, and the state
// keeps it, so a gate parked again (its last answer was refused) keeps
// the deadline it had.
func (r *run) wait(ctx context.Context, g parkedGate) error {
	if r.st.GateTimeoutMs > 0 {
		g.Until = r.st.deadline(g.Step, time.Now().Add(time.Duration(r.st.GateTimeoutMs)*time.Millisecond))
	}
	if err := r.keepPlan(passEnd{step: g.Step, phase: sdk.PhaseWaiting}, nil); err != nil {
		return err
	}
	b, _, err := r.st.encode()
	if err != nil {
		return err
	}
	w, err := json.Marshal(g)
	if err != nil {
		return err
	}
	if len(w) > maxWait {
		return fmt.Errorf("%w: the gate at step %s takes %d bytes of JSON, over the %d a flow's wait may hold; shorten its prompt, schema, defaults or subject", errWaitTooLarge, g.Step, len(w), maxWait)
	}
	_, err = r.host.SetWaiting(ctx, r.flow.ID, r.flow.Revision, sdk.WaitRequest{CurrentStep: g.Step, State: b, Wait: w})
	return err
}

// cancel ends a run whose approval at step stepID was denied: the
// reference reports it cancelled, so the flow is asked to cancel, which
// with no task active makes it cancelled at once.
func (r *run) cancel(ctx context.Context, stepID string) error {
	if err := r.save(ctx, stepID); err != nil {
		return err
	}
	_, err := r.host.RequestCancel(ctx, r.flow.ID, r.flow.Revision)
	return err
}

// finish ends the flow succeeded, with the workflow's output and its plan
// snapshot (an operator may rerun it from a step).
func (r *run) finish(ctx context.Context) error {
	if err := r.st.loadAll(); err != nil {
		return r.fail(ctx, r.flow.CurrentStep, "", err.Error())
	}
	if err := r.keepPlan(passEnd{}, nil); err != nil {
		return err
	}
	output := flows.Output(r.wf, r.st.Results)
	var text *string
	if res := r.st.Results[flows.PipelineStepID]; r.st.Pipeline != "" && res.Rendered {
		// A pipeline string ending in a renderer is a sink, as in Lobster:
		// the rendering is printed ahead of the output, which is [].
		output, text = []any{}, res.Stdout
	}
	b, _, err := r.st.encode()
	if err != nil {
		return err
	}
	out, err := r.st.produced(output, text, b)
	if err != nil {
		return err
	}
	_, err = r.host.Finish(ctx, r.flow.ID, r.flow.Revision, sdk.EndRequest{State: b, Output: out})
	return err
}

// fail ends the flow failed at step stepID, naming the task it failed on
// (if any) and why; when the pass could not read what the state names
// because the Host failed, it ends the pass on that error instead
// (hostFailed).
func (r *run) fail(ctx context.Context, stepID, taskID, summary string) error {
	if err := r.hostFailed(); err != nil {
		return err
	}
	e := sdk.EndRequest{CurrentStep: stepID, BlockedTaskID: taskID, BlockedSummary: summary}
	if r.st != nil {
		if r.wf != nil {
			// A result that cannot be read shows in the plan as it
			// stands; the flow fails either way.
			_ = r.st.loadAll()
			if err := r.keepPlan(passEnd{step: stepID, phase: sdk.PhaseFailed}, nil); err != nil {
				return err
			}
		}
		b, _, err := r.st.encode()
		if err != nil {
			return err
		}
		e.State = b
	}
	_, err := r.host.Fail(ctx, r.flow.ID, r.flow.Revision, e)
	return err
}
