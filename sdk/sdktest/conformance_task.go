package sdktest

import (
	"encoding/json"

	"github.com/flowgate/flowgate/sdk"
)

func testRequestCancel(c *conformance) {
	f := c.flow()
	got, err := c.fx.Host.RequestCancel(c.ctx, f.ID, f.Revision)
	c.ok(err, "RequestCancel")
	c.bumped(f, got, "RequestCancel")
	c.same(got.Status, sdk.FlowCancelled, "a flow without active tasks is cancelled at once")
	if !got.CancelRequested() || got.EndedAt.IsZero() {
		c.Fatalf("a cancelled flow lacks its cancel request or end time: %+v", got)
	}
	c.events(f.ID, "flow.started", "flow.cancel_requested")
	_, err = c.fx.Host.RequestCancel(c.ctx, f.ID, got.Revision)
	c.refused(err, sdk.ErrTerminal, "RequestCancel of a cancelled flow")
}

// testRequestCancelWithTasks checks the sticky cancel request: queued
// tasks end at once, running ones are asked to stop, the flow refuses new
// tasks and every move but toward its end, and is cancelled when its last
// task settles.
func testRequestCancelWithTasks(c *conformance) {
	f := c.flow()
	queued, running := c.task(f, "queued"), c.task(f, "running")
	c.ok(c.fx.StartTask(running.ID), "start a task")
	f = c.get(f.ID)

	got, err := c.fx.Host.RequestCancel(c.ctx, f.ID, f.Revision)
	c.ok(err, "RequestCancel")
	c.bumped(f, got, "RequestCancel")
	c.same(got.Status, sdk.FlowQueued, "status while a task still runs")
	if !got.CancelRequested() {
		c.Fatalf("flow %s has no cancel request after RequestCancel", f.ID)
	}
	tasks := c.tasks(f)
	c.same([]string{tasks[0].ID, tasks[1].ID}, []string{queued.ID, running.ID}, "task order")
	c.same(tasks[0].Status, sdk.TaskCancelled, "a queued task ends at once")
	c.same(tasks[0].Reason, "cancelled", "why the queued task ended")
	c.same(tasks[1].Status, sdk.TaskRunning, "a running task is left to its runner")
	if !tasks[0].CancelRequested() || !tasks[1].CancelRequested() || tasks[0].EndedAt.IsZero() {
		c.Fatalf("the flow's tasks lack their cancel requests: %+v, %+v", tasks[0], tasks[1])
	}
	c.events(f.ID, "flow.started", "flow.cancel_requested", "task.finished cancelled")

	again, err := c.fx.Host.RequestCancel(c.ctx, f.ID, got.Revision)
	c.ok(err, "a repeated RequestCancel")
	c.same(again.Revision, got.Revision, "a repeated request does not write the flow")
	c.events(f.ID, "flow.started", "flow.cancel_requested", "task.finished cancelled")

	_, _, err = c.fx.Host.CreateTask(c.ctx, sdk.TaskRequest{FlowID: f.ID, IdempotencyKey: f.ID + ":late"})
	c.refused(err, sdk.ErrCancelRequested, "CreateTask in a flow with a cancel request")
	_, err = c.fx.Host.SetWaiting(c.ctx, f.ID, got.Revision, sdk.WaitRequest{})
	c.refused(err, sdk.ErrCancelRequested, "SetWaiting of a flow with a cancel request")
	_, err = c.fx.Host.Resume(c.ctx, f.ID, got.Revision, sdk.ResumeRequest{Status: sdk.FlowRunning})
	c.refused(err, sdk.ErrCancelRequested, "Resume of a flow with a cancel request")
	c.same(c.get(f.ID).Revision, got.Revision, "revision after refused moves")

	c.ok(c.fx.FinishTask(running.ID, sdk.TaskCancelled, sdk.Result{}), "end the running task")
	end := c.get(f.ID)
	c.bumped(got, end, "the last task settling")
	c.same(end.Status, sdk.FlowCancelled, "status once the last task settled")
	c.events(f.ID, "flow.started", "flow.cancel_requested", "task.finished cancelled", "task.finished cancelled")
}

func testCreateTask(c *conformance) {
	f := c.flow()
	spec := sdk.TaskSpec{Argv: []string{"echo", "hi"}, Env: map[string]string{"K": "V"}, Timeout: sdk.Duration(5e9)}
	t, created, err := c.fx.Host.CreateTask(c.ctx, sdk.TaskRequest{FlowID: f.ID, IdempotencyKey: f.ID + ":fetch", Label: " fetch ", Spec: spec})
	c.ok(err, "CreateTask")
	c.same(created, true, "created")
	c.same(t.FlowID, f.ID, "flow")
	c.same(t.OwnerKey, f.OwnerKey, "owner")
	c.same(t.Status, sdk.TaskQueued, "status")
	c.same(t.Label, "fetch", "label (trimmed)")
	c.same(t.IdempotencyKey, f.ID+":fetch", "idempotency key")
	c.same(t.Spec, spec, "spec")
	if t.ID == "" || t.Runtime == "" || t.Result != nil || t.CreatedAt.IsZero() {
		c.Fatalf("a new task lacks its id, runtime or creation time, or has a result: %+v", t)
	}
	c.same(c.get(f.ID).Revision, f.Revision, "creating a task does not write the flow")
	c.events(f.ID, "flow.started")

	for name, spec := range map[string]sdk.TaskSpec{
		"argv and shell":  {Argv: []string{"true"}, Shell: "true"},
		"stdin and input": {Shell: "cat", Stdin: "/dev/null", Input: "x"},
	} {
		_, _, err := c.fx.Host.CreateTask(c.ctx, sdk.TaskRequest{FlowID: f.ID, Spec: spec})
		c.refused(err, sdk.ErrInvalid, "CreateTask with "+name)
	}
	_, _, err = c.fx.Host.CreateTask(c.ctx, sdk.TaskRequest{FlowID: f.ID, Runtime: "two words"})
	c.refused(err, sdk.ErrInvalid, "CreateTask with a runtime of two words")
	_, _, err = c.fx.Host.CreateTask(c.ctx, sdk.TaskRequest{FlowID: "flow-that-does-not-exist", IdempotencyKey: "nowhere"})
	c.refused(err, sdk.ErrNotFound, "CreateTask in a missing flow")
	c.same(len(c.tasks(f)), 1, "tasks after refused creates")
}

// testIdempotencyKey checks that a repeated key returns the first task,
// writes nothing, and is refused in another flow.
func testIdempotencyKey(c *conformance) {
	f := c.flow()
	req := sdk.TaskRequest{FlowID: f.ID, IdempotencyKey: f.ID + ":step-1", Label: "one", Spec: sdk.TaskSpec{Shell: "true"}}
	first, _, err := c.fx.Host.CreateTask(c.ctx, req)
	c.ok(err, "CreateTask")
	req.Label, req.Spec = "another", sdk.TaskSpec{Shell: "false"}
	again, created, err := c.fx.Host.CreateTask(c.ctx, req)
	c.ok(err, "CreateTask with the same key")
	c.same(created, false, "created on a repeated key")
	c.same(again.ID, first.ID, "task of a repeated key")
	c.same(again.Label, "one", "a repeated key returns the first task as it is")

	c.ok(c.fx.StartTask(first.ID), "start the task")
	c.ok(c.fx.FinishTask(first.ID, sdk.TaskSucceeded, sdk.Result{Summary: "ok"}), "finish the task")
	ended, created, err := c.fx.Host.CreateTask(c.ctx, req)
	c.ok(err, "CreateTask with the key of a finished task")
	c.same([]any{created, ended.ID, ended.Status}, []any{false, first.ID, sdk.TaskSucceeded}, "a repeated key after the task ended")
	c.same(len(c.tasks(f)), 1, "tasks after repeated creates")

	other := c.flow()
	_, _, err = c.fx.Host.CreateTask(c.ctx, sdk.TaskRequest{FlowID: other.ID, IdempotencyKey: req.IdempotencyKey})
	c.refused(err, sdk.ErrInvalid, "CreateTask with another flow's key")
	c.same(len(c.tasks(other)), 0, "tasks of the other flow")
}

func testListTasks(c *conformance) {
	f := c.flow()
	c.same(len(c.tasks(f)), 0, "tasks of a new flow")
	a, b := c.task(f, "a"), c.task(f, "b")
	tasks := c.tasks(f)
	if len(tasks) != 2 {
		c.Fatalf("flow %s has %d tasks, want 2", f.ID, len(tasks))
	}
	c.same([]string{tasks[0].ID, tasks[1].ID}, []string{a.ID, b.ID}, "tasks, oldest first")
	c.same(tasks[1].Label, "b", "label")
	c.same(len(c.tasks(c.flow())), 0, "tasks of another flow")
	_, err := c.fx.Host.ListTasks(c.ctx, "flow-that-does-not-exist")
	c.refused(err, sdk.ErrNotFound, "ListTasks of a missing flow")
}

// testFinishedTask checks what a controller reads of a task the runner
// ended: its status, result and end, and one task.finished naming it.
func testFinishedTask(c *conformance) {
	f := c.flow()
	t := c.task(f, "report")
	c.ok(c.fx.StartTask(t.ID), "start the task")
	res := sdk.Result{StdoutSHA256: "abc", StdoutBytes: 9, Stdout: `{"n": 7}` + "\n", JSON: json.RawMessage(`{"n": 7}`), Summary: `{"n": 7}`}
	c.ok(c.fx.FinishTask(t.ID, sdk.TaskSucceeded, res), "finish the task")
	got := c.tasks(f)[0]
	c.same(got.Status, sdk.TaskSucceeded, "status")
	c.same(got.Attempts, 1, "attempts")
	if got.Result == nil || got.EndedAt.IsZero() {
		c.Fatalf("a finished task lacks its result or end time: %+v", got)
	}
	c.same([]any{got.Result.Summary, got.Result.Stdout, got.Result.StdoutBytes}, []any{res.Summary, res.Stdout, res.StdoutBytes}, "result")
	c.sameJSON(got.Result.JSON, `{"n":7}`, "result JSON")
	c.same(c.get(f.ID).Revision, f.Revision, "a task ending does not write a flow without a cancel request")
	c.events(f.ID, "flow.started", "task.finished succeeded")
	evs, err := c.fx.Events(f.ID)
	c.ok(err, "read the outbox")
	c.same(evs[1].TaskID, t.ID, "task of task.finished")

	_, err = c.fx.Host.CancelTask(c.ctx, t.ID)
	c.refused(err, sdk.ErrTerminal, "CancelTask of a finished task")
}

func testCancelTask(c *conformance) {
	f := c.flow()
	queued, running := c.task(f, "queued"), c.task(f, "running")
	c.ok(c.fx.StartTask(running.ID), "start a task")

	q, err := c.fx.Host.CancelTask(c.ctx, queued.ID)
	c.ok(err, "CancelTask of a queued task")
	c.same([]any{q.ID, q.Status, q.Reason}, []any{queued.ID, sdk.TaskCancelled, "cancelled"}, "a queued task ends at once")
	if !q.CancelRequested() || q.EndedAt.IsZero() {
		c.Fatalf("a cancelled task lacks its cancel request or end time: %+v", q)
	}
	c.events(f.ID, "flow.started", "task.finished cancelled")

	r, err := c.fx.Host.CancelTask(c.ctx, running.ID)
	c.ok(err, "CancelTask of a running task")
	c.same(r.Status, sdk.TaskRunning, "a running task is left to its runner")
	if !r.CancelRequested() {
		c.Fatalf("running task %s has no cancel request after CancelTask", r.ID)
	}
	again, err := c.fx.Host.CancelTask(c.ctx, running.ID)
	c.ok(err, "a repeated CancelTask")
	c.same(again.CancelRequestedAt.Equal(r.CancelRequestedAt), true, "a repeated cancel keeps the first request's time")
	c.events(f.ID, "flow.started", "task.finished cancelled")

	c.ok(c.fx.FinishTask(running.ID, sdk.TaskCancelled, sdk.Result{}), "end the running task")
	c.events(f.ID, "flow.started", "task.finished cancelled", "task.finished cancelled")
	got := c.get(f.ID)
	c.same([]any{got.Status, got.Revision, got.CancelRequested()}, []any{sdk.FlowQueued, f.Revision, false},
		"cancelling tasks neither cancels nor writes their flow")

	_, err = c.fx.Host.CancelTask(c.ctx, queued.ID)
	c.refused(err, sdk.ErrTerminal, "CancelTask of a cancelled task")
	_, err = c.fx.Host.CancelTask(c.ctx, "task-that-does-not-exist")
	c.refused(err, sdk.ErrNotFound, "CancelTask of a missing task")
}
