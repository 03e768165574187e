package flowrule

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// Refuse is a refused continuation: an sdk.ErrInvalid error that names
// the rule it broke, "continuation refused (rule): why and what to do".
func Refuse(rule, format string, args ...any) error {
	return fmt.Errorf("%w: continuation refused (%s): %s", sdk.ErrInvalid, rule, fmt.Sprintf(format, args...))
}

// Settled refuses a continuation of src, whose tasks are tasks, that did
// not settle failed or partial (or succeeded, for a rerun from a step)
// or whose outcome is unknown: a cancelled flow or one with a cancel
// request ("cancelled"), a lost flow or one with a lost task ("outcome
// unknown"), any other status or an active task ("settled failed").
func Settled(src *sdk.Flow, tasks []*sdk.Task, fromStep bool) error {
	switch {
	case fromStep && src.Status == sdk.FlowSucceeded:
		// an operator's rerun from a step of a run that succeeded
	case src.Status == sdk.FlowCancelled || src.CancelRequested():
		return Refuse("cancelled", "flow %s was cancelled; a cancellation is final: start a new flow if the work is wanted after all", src.ID)
	case src.Status == sdk.FlowLost:
		return Refuse("outcome unknown", "flow %s was lost to a host interruption and what it did is unknown; check its side effects, then start a new flow", src.ID)
	case src.Status != sdk.FlowFailed && src.Status != sdk.FlowPartial:
		return Refuse("settled failed", "flow %s is %s; only a flow that settled failed or partial can be continued", src.ID, src.Status)
	}
	for _, task := range tasks {
		if task.Status == sdk.TaskLost {
			return Refuse("outcome unknown", "task %s of flow %s was lost to a host interruption and whether its work happened is unknown; check its side effects, then start a new flow", task.ID, src.ID)
		}
		if task.Status.Active() {
			return Refuse("settled failed", "task %s of flow %s is still %s; wait for it to settle", task.ID, src.ID, task.Status)
		}
	}
	return nil
}

// PlanOf reads the plan snapshot a controller keeps in f's state under
// sdk.PlanKey, refusing ("plan snapshot") a flow without a readable one.
func PlanOf(f *sdk.Flow) (*sdk.Plan, error) {
	var st map[string]json.RawMessage
	if err := json.Unmarshal(f.State, &st); err != nil || st[sdk.PlanKey] == nil {
		return nil, Refuse("plan snapshot", "flow %s has no plan snapshot (state.%s) to say what succeeded; its controller does not support continuation: start a new flow", f.ID, sdk.PlanKey)
	}
	var p sdk.Plan
	if err := json.Unmarshal(st[sdk.PlanKey], &p); err != nil {
		return nil, Refuse("plan snapshot", "flow %s's plan snapshot is damaged (%v); start a new flow", f.ID, err)
	}
	return &p, nil
}

// Receipt is the receipt of continuing src, of chain chainID, with req:
// the plan snapshot is read, the controller compared ("controller
// changed") and the assignments worked out by Continuation. The caller
// has applied Settled and the chain's own rules.
func Receipt(src *sdk.Flow, chainID string, req sdk.ContinueRequest) (*sdk.Continuation, error) {
	plan, err := PlanOf(src)
	if err != nil {
		return nil, err
	}
	if req.Controller != "" && plan.Controller != "" && req.Controller != plan.Controller {
		return nil, Refuse("controller changed", "flow %s ran under controller %s and the continuation would run under %s; a continuation reruns the same plan: start a new flow instead", src.ID, plan.Controller, req.Controller)
	}
	assigned, reuse, rerun, err := Continuation(plan, req.Assignments, strings.TrimSpace(req.FromStep))
	if err != nil {
		return nil, err
	}
	return &sdk.Continuation{ChainID: chainID, SourceFlowID: src.ID, SourceRevision: src.Revision,
		Reason: strings.TrimSpace(req.Reason), Review: strings.TrimSpace(req.Review), FromStep: strings.TrimSpace(req.FromStep), Assignments: assigned, Reuse: reuse, Rerun: rerun}, nil
}

// SameRequest reports whether req, made on src, is the request that
// produced receipt r: a repeated submission, answered with r's successor.
func SameRequest(r *sdk.Continuation, src *sdk.Flow, req sdk.ContinueRequest) bool {
	if r == nil || r.SourceFlowID != src.ID || r.SourceRevision != req.ExpectedRevision {
		return false
	}
	again, err := Receipt(src, r.ChainID, req)
	return err == nil && reflect.DeepEqual(again, r)
}

// Successor is the flow a host stores for accepted receipt r of src: id,
// queued, in src's chain, with src's owner, controller, goal, state and
// notify settings: a continuation is told about as its source was.
func Successor(id string, src *sdk.Flow, r *sdk.Continuation, now time.Time) *sdk.Flow {
	return &sdk.Flow{
		ID: id, SyncMode: src.SyncMode, OwnerKey: src.OwnerKey, ControllerID: src.ControllerID,
		Status: sdk.FlowQueued, Goal: src.Goal, State: append(json.RawMessage(nil), src.State...),
		NotifyPolicy: src.NotifyPolicy, Origin: src.Origin, CreatedAt: now, UpdatedAt: now,
		NotifyTo: slices.Clone(src.NotifyTo), NotifyTemplate: src.NotifyTemplate,
		ChainID: r.ChainID, SourceFlowID: src.ID, SourceRevision: src.Revision, Continuation: r,
	}
}
