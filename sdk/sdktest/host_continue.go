package sdktest

import (
	"context"
	"strings"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
)

// Continue implements sdk.Host by the gateway's rules (package flowrule):
// the source must be a first run that settled failed or partial with a
// plan snapshot and no lost task, the chain may have one continuation,
// an identical request returns it again, and the successor is stored
// queued, with its receipt, and gets flow.started. It does not check
// definition files or billing and budgets, which the gateway keeps.
func (h *Host) Continue(ctx context.Context, flowID string, req sdk.ContinueRequest) (*sdk.Flow, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if strings.TrimSpace(req.Reason) == "" {
		return nil, false, invalid("a continuation needs a reason: say what went wrong and what the continuation changes")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	src, err := h.loadFlow(flowID)
	if err != nil {
		return nil, false, err
	}
	if src.SourceFlowID != "" {
		return nil, false, flowrule.Refuse("two runs", "flow %s is already the continuation of %s; a chain has at most two runs", src.ID, src.SourceFlowID)
	}
	if id, ok := h.continued[src.Chain()]; ok {
		succ, err := h.loadFlow(id)
		if err != nil {
			return nil, false, err
		}
		if flowrule.SameRequest(succ.Continuation, src, req) {
			return succ, false, nil
		}
		return nil, false, flowrule.Refuse("one continuation", "chain %s already has its continuation, flow %s, accepted with another request", src.Chain(), id)
	}
	if src.Revision != req.ExpectedRevision {
		return nil, false, &sdk.RevisionConflictError{Expected: req.ExpectedRevision, Current: src}
	}
	var tasks []*sdk.Task
	for _, id := range h.flowTasks[src.ID] {
		t, err := h.loadTask(id)
		if err != nil {
			return nil, false, err
		}
		tasks = append(tasks, t)
	}
	if err := flowrule.Settled(src, tasks, strings.TrimSpace(req.FromStep) != ""); err != nil {
		return nil, false, err
	}
	r, err := flowrule.Receipt(src, src.Chain(), req)
	if err != nil {
		return nil, false, err
	}
	succ := flowrule.Successor(h.nextID("flow"), src, r, now())
	succ.Revision = 1
	h.putFlow(succ)
	h.continued[src.Chain()] = succ.ID
	h.appendEvent(succ.ID, sdk.EventFlowStarted, "", nil)
	return succ, true, nil
}
