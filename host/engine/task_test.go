package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

func detached(t testing.TB, eng *engine.Engine) *stored.Task {
	t.Helper()
	task, created, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "me", Label: "backup", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	require.NoError(t, err)
	require.True(t, created)
	return task
}

func TestMirroredFlowFollowsItsTask(t *testing.T) {
	t.Parallel()
	cases := []struct {
		end  sdk.TaskStatus
		flow sdk.FlowStatus
	}{
		{sdk.TaskSucceeded, sdk.FlowSucceeded},
		{sdk.TaskFailed, sdk.FlowFailed},
		{sdk.TaskTimedOut, sdk.FlowFailed},
		{sdk.TaskCancelled, sdk.FlowCancelled},
		{sdk.TaskLost, sdk.FlowLost},
	}
	for _, c := range cases {
		t.Run(string(c.end), func(t *testing.T) {
			t.Parallel()
			eng := newEngine(t)
			task := detached(t, eng)
			f, err := eng.GetFlow(task.FlowID)
			require.NoError(t, err)
			require.Equal(t, sdk.SyncTaskMirrored, f.SyncMode)
			require.Equal(t, sdk.FlowQueued, f.Status)
			require.Equal(t, "backup", f.Goal)
			require.Equal(t, "me", f.OwnerKey)

			_, err = eng.StartTask(task.ID, engine.StartInput{PID: 42})
			require.NoError(t, err)
			f, err = eng.GetFlow(task.FlowID)
			require.NoError(t, err)
			require.Equal(t, sdk.FlowRunning, f.Status)
			rev := f.Revision

			code := 3
			done, err := eng.FinishTask(task.ID, engine.FinishInput{Status: c.end, ExitCode: &code, Error: "why"})
			require.NoError(t, err)
			require.Equal(t, c.end, done.Status)
			require.False(t, done.CleanupAfter.IsZero())
			require.Equal(t, []string{"why"}, done.Errors)
			f, err = eng.GetFlow(task.FlowID)
			require.NoError(t, err)
			require.Equal(t, c.flow, f.Status)
			require.Equal(t, rev+1, f.Revision)
			require.True(t, f.EndedAt.Equal(done.EndedAt))

			_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded})
			require.ErrorIs(t, err, sdk.ErrTerminal, "nothing leaves a terminal task status")
			_, err = eng.StartTask(task.ID, engine.StartInput{})
			require.ErrorIs(t, err, sdk.ErrTerminal)
		})
	}
}

func TestMirroredFlowRefusesControllerWrites(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	task := detached(t, eng)
	_, err := eng.UpdateFlow(task.FlowID, 0, engine.FlowPatch{State: json.RawMessage(`1`)})
	require.ErrorIs(t, err, sdk.ErrNotManaged)
	_, _, err = eng.CreateTask(engine.CreateTaskInput{FlowID: task.FlowID})
	require.ErrorIs(t, err, sdk.ErrNotManaged)
}

func TestIdempotencyKeyReturnsTheFirstTask(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	in := engine.CreateTaskInput{FlowID: f.ID, Label: "step 1", IdempotencyKey: f.ID + ":step1:0"}
	first, created, err := eng.CreateTask(in)
	require.NoError(t, err)
	require.True(t, created)
	again, created, err := eng.CreateTask(in)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, first, again)

	tasks, err := eng.FlowTasks(f.ID)
	require.NoError(t, err)
	require.Len(t, tasks, 1)

	byKey, err := eng.ResolveTask(in.IdempotencyKey)
	require.NoError(t, err)
	require.Equal(t, first.ID, byKey.ID)

	other := createFlow(t, eng)
	_, _, err = eng.CreateTask(engine.CreateTaskInput{FlowID: other.ID, IdempotencyKey: in.IdempotencyKey})
	require.ErrorIs(t, err, sdk.ErrInvalid, "a key is bound to its flow")

	d1, created, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "me", IdempotencyKey: "nightly"})
	require.NoError(t, err)
	require.True(t, created)
	d2, created, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "me", IdempotencyKey: "nightly"})
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, d1.ID, d2.ID)
	page, err := eng.ListFlows(engine.FlowFilter{SyncMode: sdk.SyncTaskMirrored})
	require.NoError(t, err)
	require.Len(t, page.Flows, 1, "a repeated detached create makes no second mirrored flow")
}

func TestLinkingRefusals(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)

	_, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: "missing"})
	require.ErrorIs(t, err, sdk.ErrNotFound)

	f := createFlow(t, eng)
	_, _, err = eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, OwnerKey: "someone-else"})
	require.ErrorIs(t, err, sdk.ErrOwnerMismatch)

	task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID})
	require.NoError(t, err)
	require.Equal(t, f.OwnerKey, task.OwnerKey, "a child inherits the flow's owner")
	_, err = eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	_, err = eng.CancelFlow(f.ID, "")
	require.NoError(t, err)
	_, _, err = eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID})
	require.ErrorIs(t, err, sdk.ErrCancelRequested)

	done := createFlow(t, eng)
	_, err = eng.Finish(done.ID, done.Revision, engine.EndInput{})
	require.NoError(t, err)
	_, _, err = eng.CreateTask(engine.CreateTaskInput{FlowID: done.ID})
	require.ErrorIs(t, err, sdk.ErrTerminal)

	_, _, err = eng.CreateTask(engine.CreateTaskInput{})
	require.ErrorIs(t, err, sdk.ErrInvalid, "a detached task needs an owner")
	_, _, err = eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Argv: []string{"a"}, Shell: "b"}})
	require.ErrorIs(t, err, sdk.ErrInvalid)

	page, err := eng.ListTasks(engine.TaskFilter{})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 1, "refused creates write nothing")
}

func TestCancelFlowWithoutActiveTasksIsImmediate(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	queued, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID})
	require.NoError(t, err)

	res, err := eng.CancelFlow(f.ID, "")
	require.NoError(t, err)
	require.Equal(t, sdk.FlowCancelled, res.Flow.Status)
	require.False(t, res.Flow.CancelRequestedAt.IsZero())
	require.Equal(t, 0, res.Active)

	got, err := eng.GetTask(queued.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskCancelled, got.Status, "a queued child is cancelled at once")

	f, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowCancelled, f.Status)
	require.Equal(t, res.Flow.Revision, f.Revision)
}

func TestCancelIsStickyUntilLastChildSettles(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	var running []*stored.Task
	for i := 0; i < 2; i++ {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID})
		require.NoError(t, err)
		_, err = eng.StartTask(task.ID, engine.StartInput{})
		require.NoError(t, err)
		running = append(running, task)
	}

	res, err := eng.CancelFlow(f.ID, "")
	require.NoError(t, err)
	require.Equal(t, 2, res.Active)
	require.Equal(t, sdk.FlowQueued, res.Flow.Status)
	for _, task := range res.Tasks {
		require.False(t, task.CancelRequestedAt.IsZero(), "running children are marked for the runner")
	}

	// The intent is sticky: the controller cannot finish or resume it.
	cur, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	_, err = eng.Finish(cur.ID, cur.Revision, engine.EndInput{})
	require.ErrorIs(t, err, sdk.ErrCancelRequested)
	_, err = eng.SetWaiting(cur.ID, cur.Revision, engine.WaitInput{})
	require.ErrorIs(t, err, sdk.ErrCancelRequested)

	// A second cancel keeps the first request time.
	again, err := eng.CancelFlow(f.ID, "")
	require.NoError(t, err)
	require.True(t, again.Flow.CancelRequestedAt.Equal(res.Flow.CancelRequestedAt))

	_, err = eng.FinishTask(running[0].ID, engine.FinishInput{Status: sdk.TaskCancelled})
	require.NoError(t, err)
	cur, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowQueued, cur.Status, "one child still active")

	_, err = eng.FinishTask(running[1].ID, engine.FinishInput{Status: sdk.TaskSucceeded})
	require.NoError(t, err)
	cur, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowCancelled, cur.Status, "the last child settling cancels the flow")
	require.False(t, cur.EndedAt.IsZero())
}

func TestRequestCancelIsGuarded(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	_, err := eng.RequestCancel(f.ID, f.Revision+5)
	require.ErrorIs(t, err, sdk.ErrRevisionConflict)
	res, err := eng.RequestCancel(f.ID, f.Revision)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowCancelled, res.Flow.Status)
}

func TestCancelTask(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	queued := detached(t, eng)
	got, err := eng.CancelTask(queued.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskCancelled, got.Status)
	f, err := eng.GetFlow(queued.FlowID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowCancelled, f.Status)
	_, err = eng.CancelTask(queued.ID)
	require.ErrorIs(t, err, sdk.ErrTerminal)

	running := detached(t, eng)
	_, err = eng.StartTask(running.ID, engine.StartInput{})
	require.NoError(t, err)
	got, err = eng.CancelTask(running.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status, "the runner ends a running task")
	require.False(t, got.CancelRequestedAt.IsZero())

	// Cancelling a mirrored flow cancels through its task.
	res, err := eng.CancelFlow(running.FlowID, "")
	require.NoError(t, err)
	require.Equal(t, 1, res.Active)
	require.Equal(t, sdk.FlowRunning, res.Flow.Status)
	require.False(t, res.Flow.CancelRequestedAt.IsZero())
	_, err = eng.FinishTask(running.ID, engine.FinishInput{Status: sdk.TaskCancelled})
	require.NoError(t, err)
	f, err = eng.GetFlow(running.FlowID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowCancelled, f.Status)
}

func TestListTasks(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	a := detached(t, eng)
	b, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "me", Runtime: "cron"})
	require.NoError(t, err)
	_, err = eng.StartTask(b.ID, engine.StartInput{})
	require.NoError(t, err)

	page, err := eng.ListTasks(engine.TaskFilter{})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 2)
	require.Equal(t, b.ID, page.Tasks[0].ID, "newest first")

	page, err = eng.ListTasks(engine.TaskFilter{Status: sdk.TaskQueued})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 1)
	require.Equal(t, a.ID, page.Tasks[0].ID)

	page, err = eng.ListTasks(engine.TaskFilter{Runtime: "cron"})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 1)
	require.Equal(t, b.ID, page.Tasks[0].ID)

	_, err = eng.ListTasks(engine.TaskFilter{Status: "done"})
	require.ErrorIs(t, err, sdk.ErrInvalid)
}

// CountFlows counts an active flow that carries a cancel request, and
// not one whose state merely has a key of the field's name (it decodes a
// record only when the name is in it, and then reads the field).
func TestCountFlowsCountsCancelRequests(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID})
	require.NoError(t, err)
	_, err = eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	_, err = eng.CancelFlow(f.ID, "")
	require.NoError(t, err)
	_, err = eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g", State: json.RawMessage(`{"cancel_requested_at":"2026-01-01T00:00:00Z"}`)})
	require.NoError(t, err)
	createFlow(t, eng)

	counts, err := eng.CountFlows()
	require.NoError(t, err)
	require.Equal(t, 3, counts.Total)
	require.Equal(t, 3, counts.ByStatus[sdk.FlowQueued])
	require.Equal(t, 1, counts.CancelRequested)
}
