package sdktest

import (
	"encoding/json"
	"errors"

	"github.com/flowgate/flowgate/sdk"
)

func testGetFlow(c *conformance) {
	f := c.flow()
	got := c.get(f.ID)
	c.same(got.ID, f.ID, "id")
	c.same(got.Revision, f.Revision, "revision of a flow nobody wrote")
	c.same(got.Revision, int64(1), "revision of a new flow (written once)")
	c.same(got.SyncMode, sdk.SyncManaged, "sync mode")
	c.same(got.Status, sdk.FlowQueued, "status")
	c.same(got.Goal, "conformance", "goal")
	c.sameJSON(got.State, `{"a":1}`, "state")
	if got.ControllerID == "" || got.OwnerKey == "" || got.CreatedAt.IsZero() {
		c.Fatalf("flow %s lacks its controller, owner or creation time: %+v", f.ID, got)
	}
	_, err := c.fx.Host.GetFlow(c.ctx, "flow-that-does-not-exist")
	c.refused(err, sdk.ErrNotFound, "GetFlow of a missing flow")
}

func testUpdateFlow(c *conformance) {
	f := c.flow()
	step, summary := " fetch ", "slow mirror"
	u, err := c.fx.Host.UpdateFlow(c.ctx, f.ID, f.Revision, sdk.FlowUpdate{
		Wait: json.RawMessage(`{"kind":"signal"}`), CurrentStep: &step, BlockedSummary: &summary,
	})
	c.ok(err, "UpdateFlow")
	c.bumped(f, u, "UpdateFlow")
	c.same(u.Status, sdk.FlowQueued, "status after UpdateFlow")
	c.same(u.CurrentStep, "fetch", "current step (trimmed)")
	c.same(u.BlockedSummary, "slow mirror", "blocked summary")
	c.sameJSON(u.State, `{"a":1}`, "state left absent from the update is kept")
	c.sameJSON(u.Wait, `{"kind":"signal"}`, "wait")
	c.same(c.get(f.ID).Revision, u.Revision, "revision read back")

	u2, err := c.fx.Host.UpdateFlow(c.ctx, f.ID, u.Revision, sdk.FlowUpdate{State: json.RawMessage(`null`)})
	c.ok(err, "UpdateFlow to a null state")
	c.bumped(u, u2, "UpdateFlow")
	c.same(string(u2.State), "null", "a JSON null state is stored as null")
	c.same(u2.CurrentStep, "fetch", "current step left absent is kept")

	_, err = c.fx.Host.UpdateFlow(c.ctx, f.ID, u2.Revision, sdk.FlowUpdate{State: json.RawMessage(`{`)})
	c.refused(err, sdk.ErrInvalid, "UpdateFlow with a state that is not JSON")
	_, err = c.fx.Host.UpdateFlow(c.ctx, "flow-that-does-not-exist", 0, sdk.FlowUpdate{})
	c.refused(err, sdk.ErrNotFound, "UpdateFlow of a missing flow")
	c.same(c.get(f.ID).Revision, u2.Revision, "revision after refused writes")
	c.events(f.ID, "flow.started")
}

func testRevisionConflict(c *conformance) {
	f := c.flow()
	step := "one"
	cur, err := c.fx.Host.UpdateFlow(c.ctx, f.ID, f.Revision, sdk.FlowUpdate{CurrentStep: &step})
	c.ok(err, "UpdateFlow")
	stale := f.Revision
	for name, call := range map[string]func() (*sdk.Flow, error){
		"UpdateFlow": func() (*sdk.Flow, error) {
			return c.fx.Host.UpdateFlow(c.ctx, f.ID, stale, sdk.FlowUpdate{State: json.RawMessage(`{"b":2}`)})
		},
		"SetWaiting": func() (*sdk.Flow, error) { return c.fx.Host.SetWaiting(c.ctx, f.ID, stale, sdk.WaitRequest{}) },
		"Resume": func() (*sdk.Flow, error) {
			return c.fx.Host.Resume(c.ctx, f.ID, stale, sdk.ResumeRequest{Status: sdk.FlowRunning})
		},
		"Finish":        func() (*sdk.Flow, error) { return c.fx.Host.Finish(c.ctx, f.ID, stale, sdk.EndRequest{}) },
		"Fail":          func() (*sdk.Flow, error) { return c.fx.Host.Fail(c.ctx, f.ID, stale, sdk.EndRequest{}) },
		"RequestCancel": func() (*sdk.Flow, error) { return c.fx.Host.RequestCancel(c.ctx, f.ID, stale) },
	} {
		_, err := call()
		c.refused(err, sdk.ErrRevisionConflict, name+" at a stale revision")
		var rc *sdk.RevisionConflictError
		if !errors.As(err, &rc) || rc.Current == nil {
			c.Fatalf("%s at a stale revision: %v is not a *sdk.RevisionConflictError carrying the current flow", name, err)
		}
		c.same(rc.Expected, stale, name+": conflict's expected revision")
		c.same(rc.Current.ID, f.ID, name+": conflict's flow")
		c.same(rc.Current.Revision, cur.Revision, name+": conflict's current revision")
		c.same(rc.Current.CurrentStep, "one", name+": conflict's flow is the current one")
	}
	got := c.get(f.ID)
	c.same(got.Revision, cur.Revision, "a refused write changes nothing: revision")
	c.same(got.Status, sdk.FlowQueued, "a refused write changes nothing: status")
	c.sameJSON(got.State, `{"a":1}`, "a refused write changes nothing: state")
	c.events(f.ID, "flow.started")
}

func testSetWaiting(c *conformance) {
	f := c.flow()
	w, err := c.fx.Host.SetWaiting(c.ctx, f.ID, f.Revision, sdk.WaitRequest{
		CurrentStep: "approve", Wait: json.RawMessage(`{"kind":"approval","prompt":"ship it?"}`),
	})
	c.ok(err, "SetWaiting")
	c.bumped(f, w, "SetWaiting")
	c.same(w.Status, sdk.FlowWaiting, "status")
	c.same(w.CurrentStep, "approve", "current step")
	c.sameJSON(w.Wait, `{"kind":"approval","prompt":"ship it?"}`, "wait")

	again, err := c.fx.Host.SetWaiting(c.ctx, f.ID, w.Revision, sdk.WaitRequest{Wait: json.RawMessage(`{"kind":"input"}`)})
	c.ok(err, "SetWaiting on a waiting flow (a new prompt)")
	c.bumped(w, again, "SetWaiting again")
	c.same(again.CurrentStep, "approve", "current step left empty is kept")

	b, err := c.fx.Host.SetWaiting(c.ctx, f.ID, again.Revision, sdk.WaitRequest{BlockedTaskID: "task-x", BlockedSummary: " needs a key "})
	c.ok(err, "SetWaiting with a blocker")
	c.bumped(again, b, "SetWaiting blocked")
	c.same(b.Status, sdk.FlowBlocked, "status with a blocker")
	c.same([]string{b.BlockedTaskID, b.BlockedSummary}, []string{"task-x", "needs a key"}, "blocked fields")
	c.events(f.ID, "flow.started")
}

func testResume(c *conformance) {
	f := c.flow()
	_, err := c.fx.Host.Resume(c.ctx, f.ID, f.Revision, sdk.ResumeRequest{Status: sdk.FlowWaiting})
	c.refused(err, sdk.ErrInvalid, "Resume to waiting")

	r, err := c.fx.Host.Resume(c.ctx, f.ID, f.Revision, sdk.ResumeRequest{Status: sdk.FlowRunning, CurrentStep: "go"})
	c.ok(err, "Resume a queued flow to running")
	c.bumped(f, r, "Resume")
	c.same(r.Status, sdk.FlowRunning, "status")
	c.same(string(r.Wait), "null", "wait after Resume")
	c.events(f.ID, "flow.started") // starting a queued flow tells nobody

	w, err := c.fx.Host.SetWaiting(c.ctx, f.ID, r.Revision, sdk.WaitRequest{Wait: json.RawMessage(`{"kind":"approval"}`)})
	c.ok(err, "SetWaiting")
	q, err := c.fx.Host.Resume(c.ctx, f.ID, w.Revision, sdk.ResumeRequest{State: json.RawMessage(`{"approved":true}`)})
	c.ok(err, "Resume a waiting flow")
	c.bumped(w, q, "Resume")
	c.same(q.Status, sdk.FlowQueued, "a flow resumes queued by default")
	c.same(string(q.Wait), "null", "wait after Resume")
	c.sameJSON(q.State, `{"approved":true}`, "state")
	c.events(f.ID, "flow.started", "flow.resumed queued")

	b, err := c.fx.Host.SetWaiting(c.ctx, f.ID, q.Revision, sdk.WaitRequest{BlockedSummary: "stuck"})
	c.ok(err, "SetWaiting blocked")
	r2, err := c.fx.Host.Resume(c.ctx, f.ID, b.Revision, sdk.ResumeRequest{Status: sdk.FlowRunning})
	c.ok(err, "Resume a blocked flow")
	c.same(r2.Status, sdk.FlowRunning, "status")
	c.same(r2.BlockedSummary, "", "blocked summary after Resume")
	c.events(f.ID, "flow.started", "flow.resumed queued", "flow.resumed running")
}

func testFinishAndFail(c *conformance) {
	f := c.flow()
	out := &sdk.Output{Value: json.RawMessage(`[3]`), Text: "three\n"}
	done, err := c.fx.Host.Finish(c.ctx, f.ID, f.Revision, sdk.EndRequest{CurrentStep: "done", State: json.RawMessage(`{"out":3}`), Output: out})
	c.ok(err, "Finish")
	c.bumped(f, done, "Finish")
	c.same(done.Status, sdk.FlowSucceeded, "status")
	c.same(done.CurrentStep, "done", "current step")
	c.sameJSON(done.State, `{"out":3}`, "state")
	if done.Output == nil {
		c.Fatalf("Finish dropped the flow's output: %+v", done)
	}
	c.sameJSON(done.Output.Value, `[3]`, "output")
	c.same(done.Output.Text, "three\n", "output text")
	c.same(string(done.Wait), "null", "wait of an ended flow")
	if done.EndedAt.IsZero() {
		c.Fatalf("a finished flow has no end time: %+v", done)
	}

	g := c.flow()
	w, err := c.fx.Host.SetWaiting(c.ctx, g.ID, g.Revision, sdk.WaitRequest{BlockedSummary: "stuck"})
	c.ok(err, "SetWaiting")
	failed, err := c.fx.Host.Fail(c.ctx, g.ID, w.Revision, sdk.EndRequest{BlockedTaskID: "task-9", BlockedSummary: "it broke"})
	c.ok(err, "Fail")
	c.bumped(w, failed, "Fail")
	c.same(failed.Status, sdk.FlowFailed, "status")
	c.same([]string{failed.BlockedTaskID, failed.BlockedSummary}, []string{"task-9", "it broke"}, "what the flow failed on")
	if failed.EndedAt.IsZero() {
		c.Fatalf("a failed flow has no end time: %+v", failed)
	}
	c.events(f.ID, "flow.started")
	c.events(g.ID, "flow.started")
}

// testTerminal checks that nothing leaves a terminal status: every move
// is refused with sdk.ErrTerminal, at the current revision, and nothing
// changes.
func testTerminal(c *conformance) {
	f := c.flow()
	done, err := c.fx.Host.Finish(c.ctx, f.ID, f.Revision, sdk.EndRequest{})
	c.ok(err, "Finish")
	rev := done.Revision
	for name, call := range map[string]func() error{
		"Finish": func() error { _, err := c.fx.Host.Finish(c.ctx, f.ID, rev, sdk.EndRequest{}); return err },
		"Fail":   func() error { _, err := c.fx.Host.Fail(c.ctx, f.ID, rev, sdk.EndRequest{}); return err },
		"Resume": func() error {
			_, err := c.fx.Host.Resume(c.ctx, f.ID, rev, sdk.ResumeRequest{Status: sdk.FlowRunning})
			return err
		},
		"SetWaiting":    func() error { _, err := c.fx.Host.SetWaiting(c.ctx, f.ID, rev, sdk.WaitRequest{}); return err },
		"RequestCancel": func() error { _, err := c.fx.Host.RequestCancel(c.ctx, f.ID, rev); return err },
		"CreateTask": func() error {
			_, _, err := c.fx.Host.CreateTask(c.ctx, sdk.TaskRequest{FlowID: f.ID, IdempotencyKey: f.ID + ":late"})
			return err
		},
	} {
		c.refused(call(), sdk.ErrTerminal, name+" on a succeeded flow")
	}
	got := c.get(f.ID)
	c.same(got.Revision, rev, "revision after refused moves")
	c.same(got.Status, sdk.FlowSucceeded, "status after refused moves")
	c.same(len(c.tasks(f)), 0, "tasks of a flow that refused one")
	c.events(f.ID, "flow.started")
}

func testLog(c *conformance) {
	c.ok(c.fx.Host.Log(c.ctx, "info", "conformance", map[string]string{"k": "v"}), "Log")
	c.ok(c.fx.Host.Log(c.ctx, "debug", "no fields", nil), "Log without fields")
}
