package sdktest

import (
	"encoding/json"
	"errors"

	"github.com/flowgate/flowgate/sdk"
)

// advanceRequest is an Advance of flow f to step with state, creating a
// task for each label, keyed by flow and label.
func advanceRequest(f *sdk.Flow, step, state string, labels ...string) sdk.AdvanceRequest {
	a := sdk.AdvanceRequest{Update: sdk.FlowUpdate{CurrentStep: &step, State: json.RawMessage(state)}}
	for _, l := range labels {
		a.Tasks = append(a.Tasks, sdk.TaskRequest{IdempotencyKey: f.ID + ":" + l, Label: l, Spec: sdk.TaskSpec{Shell: "echo " + l}})
	}
	return a
}

// testAdvance checks that Advance writes the flow once and creates its
// tasks, in order, queued, with no event; and that the same Advance again
// (a redelivered event) returns the same tasks, created false.
func testAdvance(c *conformance) {
	f := c.flow()
	res, err := c.fx.Host.Advance(c.ctx, f.ID, f.Revision, advanceRequest(f, "fan", `{"b":2}`, "left", "right"))
	c.ok(err, "Advance")
	c.bumped(f, res.Flow, "Advance")
	c.same(res.Flow.CurrentStep, "fan", "current step")
	c.sameJSON(res.Flow.State, `{"b":2}`, "state")
	c.same(res.Created, []bool{true, true}, "created")
	c.same(len(res.Tasks), 2, "tasks returned")
	for i, label := range []string{"left", "right"} {
		t := res.Tasks[i]
		c.same([]any{t.FlowID, t.Label, t.Status, t.IdempotencyKey, t.Spec.Shell}, []any{f.ID, label, sdk.TaskQueued, f.ID + ":" + label, "echo " + label}, "task "+label)
	}
	tasks := c.tasks(f)
	c.same([]string{tasks[0].ID, tasks[1].ID}, []string{res.Tasks[0].ID, res.Tasks[1].ID}, "tasks listed, in the order asked")
	c.same(c.get(f.ID).Revision, res.Flow.Revision, "revision after Advance")
	c.events(f.ID, "flow.started")

	again, err := c.fx.Host.Advance(c.ctx, f.ID, res.Flow.Revision, advanceRequest(f, "fan", `{"b":2}`, "left", "right"))
	c.ok(err, "the same Advance again")
	c.bumped(res.Flow, again.Flow, "the same Advance again")
	c.same(again.Created, []bool{false, false}, "created on repeated keys")
	c.same([]string{again.Tasks[0].ID, again.Tasks[1].ID}, []string{res.Tasks[0].ID, res.Tasks[1].ID}, "tasks of repeated keys")

	bare := sdk.AdvanceRequest{Tasks: []sdk.TaskRequest{{FlowID: f.ID, Label: "more", Spec: sdk.TaskSpec{Shell: "true"}}}}
	more, err := c.fx.Host.Advance(c.ctx, f.ID, again.Flow.Revision, bare)
	c.ok(err, "Advance with an empty update")
	c.same(more.Flow.Revision, again.Flow.Revision, "an empty update does not write the flow")
	c.same(more.Created, []bool{true}, "created by an Advance with an empty update")
	c.same(len(c.tasks(f)), 3, "tasks after three Advances")
}

// testAdvanceRefused checks that a refused Advance changes nothing: not
// the flow, and no task, even one that came before the refused one.
func testAdvanceRefused(c *conformance) {
	f := c.flow()
	_, err := c.fx.Host.Advance(c.ctx, f.ID, f.Revision+1, advanceRequest(f, "s", `{"b":2}`, "one"))
	var conflict *sdk.RevisionConflictError
	c.refused(err, sdk.ErrRevisionConflict, "Advance at a stale revision")
	if !errors.As(err, &conflict) || conflict.Current == nil || conflict.Current.Revision != f.Revision {
		c.Fatalf("a stale Advance's error does not carry the current flow: %v", err)
	}
	bad := advanceRequest(f, "s", `{"b":2}`, "one", "two")
	bad.Tasks[1].Spec = sdk.TaskSpec{Argv: []string{"true"}, Shell: "true"}
	for name, a := range map[string]sdk.AdvanceRequest{
		"no task":                advanceRequest(f, "s", `{"b":2}`),
		"a task of another flow": {Tasks: []sdk.TaskRequest{{FlowID: "another-flow", Spec: sdk.TaskSpec{Shell: "true"}}}},
		"two tasks with one key": {Tasks: []sdk.TaskRequest{{IdempotencyKey: "k", Spec: sdk.TaskSpec{Shell: "true"}}, {IdempotencyKey: "k", Spec: sdk.TaskSpec{Shell: "true"}}}},
		"a bad second task":      bad,
		"state that is not JSON": {Update: sdk.FlowUpdate{State: json.RawMessage(`{`)}, Tasks: []sdk.TaskRequest{{Spec: sdk.TaskSpec{Shell: "true"}}}},
	} {
		_, err := c.fx.Host.Advance(c.ctx, f.ID, f.Revision, a)
		c.refused(err, sdk.ErrInvalid, "Advance with "+name)
	}
	got, err := c.fx.Host.RequestCancel(c.ctx, f.ID, f.Revision)
	c.ok(err, "RequestCancel")
	_, err = c.fx.Host.Advance(c.ctx, f.ID, got.Revision, advanceRequest(f, "s", `{"b":2}`, "late"))
	c.refused(err, sdk.ErrCancelRequested, "Advance of a flow with a cancel request")
	end := c.get(f.ID)
	c.same(end.Revision, got.Revision, "revision after refused Advances")
	c.sameJSON(end.State, `{"a":1}`, "state after refused Advances")
	c.same(len(c.tasks(f)), 0, "tasks after refused Advances")
}

// testAdvanceAcks checks that an Advance naming the event in delivery
// (AckSeq) removes it with its writes, and that one naming another event
// leaves the outbox as it was.
func testAdvanceAcks(c *conformance) {
	f := c.flow()
	evs, err := c.fx.Events(f.ID)
	c.ok(err, "read the outbox")
	c.same(len(evs), 1, "events of a new flow")
	a := advanceRequest(f, "one", `{"n":1}`, "one")
	a.AckSeq = evs[0].Seq + 1
	res, err := c.fx.Host.Advance(c.ctx, f.ID, f.Revision, a)
	c.ok(err, "Advance naming an event not in delivery")
	c.events(f.ID, "flow.started")

	a = advanceRequest(f, "two", `{"n":2}`, "two")
	a.AckSeq = evs[0].Seq
	_, err = c.fx.Host.Advance(c.ctx, f.ID, res.Flow.Revision, a)
	c.ok(err, "Advance acknowledging the event in delivery")
	c.events(f.ID)
	c.same(len(c.tasks(f)), 2, "tasks after two Advances")
}
