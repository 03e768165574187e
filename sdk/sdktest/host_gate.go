package sdktest

import (
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
)

// Decide answers the gate flow flowID waits at as the gateway does when
// someone answers it: d goes into the flow's Decisions by the gate's
// step, stamped now, the flow moves to running, and flow.resumed is
// queued carrying the decision (sdk.Resumed). It refuses with
// sdk.ErrInvalid, changing nothing, a flow that waits at no gate (an
// sdk.Wait gate with a step), an approval the gate's approver rules do
// not accept (sdk.Wait.CheckApproval), and a gate already decided (one
// whose wait carries an error may be decided anew). Harness.Decide
// delivers what follows.
func (h *Host) Decide(flowID string, d sdk.Decision) (*sdk.Flow, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := h.loadFlow(flowID)
	if err != nil {
		return nil, err
	}
	g, ok := sdk.ParseGate(f.Wait)
	if f.Status != sdk.FlowWaiting || !ok || g.Step == "" {
		return nil, invalid("flow %s is %s and waits at no gate", f.ID, f.Status)
	}
	d.By = strings.TrimSpace(d.By)
	if err := g.CheckApproval(d); err != nil {
		return nil, err
	}
	if prev, ok := f.Decisions[g.Step]; ok && g.Error == "" {
		return nil, invalid("the gate at step %s of flow %s was already decided by %s at %s", g.Step, f.ID, prev.By, prev.At.Format(time.RFC3339))
	}
	d.At = now()
	if f.Decisions == nil {
		f.Decisions = map[string]sdk.Decision{}
	}
	f.Decisions[g.Step] = d
	if err := move(f, sdk.FlowRunning); err != nil {
		return nil, err
	}
	data, err := flowrule.ResumedData(sdk.Resumed{Status: f.Status, Step: g.Step, Decision: &d})
	if err != nil {
		return nil, err
	}
	h.saveFlow(f)
	h.appendEvent(f.ID, sdk.EventFlowResumed, "", data)
	return f, nil
}

// Decide answers the gate flow flowID waits at (Host.Decide) and
// delivers the events that follow, returning the flow as it then is.
// The test fails if the answer is refused; call Host().Decide to test a
// refusal.
func (h *Harness) Decide(flowID string, d sdk.Decision) *sdk.Flow {
	h.t.Helper()
	if _, err := h.host.Decide(flowID, d); err != nil {
		h.t.Fatalf("sdktest: %v", fmt.Errorf("answer the gate of flow %s: %w", flowID, err))
	}
	h.Drain(flowID)
	return h.Flow(flowID)
}
