package sdktest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

func newFlow(t *testing.T, h *sdktest.Host) *sdk.Flow {
	t.Helper()
	f, err := h.NewFlow("ctl", "goal", json.RawMessage(`{"a":1}`))
	require.NoError(t, err)
	return f
}

func TestHostNewFlow(t *testing.T) {
	t.Parallel()
	h := sdktest.NewHost()
	f := newFlow(t, h)
	require.Equal(t, sdk.SyncManaged, f.SyncMode)
	require.Equal(t, sdk.FlowQueued, f.Status)
	require.EqualValues(t, 1, f.Revision, "a new flow has been written once")
	evs := h.Events(f.ID)
	require.Len(t, evs, 1)
	require.Equal(t, sdk.EventFlowStarted, evs[0].Type)
	require.EqualValues(t, 1, evs[0].Seq)
	h.Ack(f.ID, 1)
	h.Ack(f.ID, 1)
	require.Empty(t, h.Events(f.ID))

	_, err := h.NewFlow("ctl", "goal", json.RawMessage(`{`))
	require.ErrorIs(t, err, sdk.ErrInvalid)
	_, err = h.NewFlow("", "goal", nil)
	require.ErrorIs(t, err, sdk.ErrInvalid)
}

func TestHostRevisionConflict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := sdktest.NewHost()
	f := newFlow(t, h)
	step := "one"
	f1, err := h.UpdateFlow(ctx, f.ID, 1, sdk.FlowUpdate{CurrentStep: &step, Wait: json.RawMessage(`null`)})
	require.NoError(t, err)
	require.EqualValues(t, 2, f1.Revision)
	require.Equal(t, json.RawMessage(`null`), f1.Wait)
	require.JSONEq(t, `{"a":1}`, string(f1.State), "absent fields are kept")

	_, err = h.Finish(ctx, f.ID, 1, sdk.EndRequest{})
	require.ErrorIs(t, err, sdk.ErrRevisionConflict)
	rc, ok := err.(*sdk.RevisionConflictError)
	require.True(t, ok)
	require.EqualValues(t, 1, rc.Expected)
	require.EqualValues(t, 2, rc.Current.Revision)
	require.Equal(t, "one", rc.Current.CurrentStep)

	got, err := h.GetFlow(ctx, f.ID)
	require.NoError(t, err)
	require.Equal(t, f1, got, "a refused write changes nothing")
}

func TestHostTransitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := sdktest.NewHost()
	f := newFlow(t, h)

	f, err := h.SetWaiting(ctx, f.ID, f.Revision, sdk.WaitRequest{Wait: json.RawMessage(`{"kind":"approval"}`)})
	require.NoError(t, err)
	require.Equal(t, sdk.FlowWaiting, f.Status)

	f, err = h.SetWaiting(ctx, f.ID, f.Revision, sdk.WaitRequest{BlockedSummary: " needs a key "})
	require.NoError(t, err)
	require.Equal(t, sdk.FlowBlocked, f.Status)
	require.Equal(t, "needs a key", f.BlockedSummary)

	_, err = h.Resume(ctx, f.ID, f.Revision, sdk.ResumeRequest{Status: sdk.FlowWaiting})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	f, err = h.Resume(ctx, f.ID, f.Revision, sdk.ResumeRequest{Status: sdk.FlowRunning, CurrentStep: "two"})
	require.NoError(t, err)
	require.Equal(t, sdk.FlowRunning, f.Status)
	require.Empty(t, f.BlockedSummary)
	require.Equal(t, json.RawMessage(`null`), f.Wait)
	evs := h.Events(f.ID)
	require.Equal(t, sdk.EventFlowResumed, evs[len(evs)-1].Type)
	require.JSONEq(t, `{"status":"running"}`, string(evs[len(evs)-1].Data))

	f, err = h.Fail(ctx, f.ID, f.Revision, sdk.EndRequest{BlockedTaskID: "task-9", BlockedSummary: "it broke"})
	require.NoError(t, err)
	require.Equal(t, sdk.FlowFailed, f.Status)
	require.Equal(t, "task-9", f.BlockedTaskID)
	require.False(t, f.EndedAt.IsZero())

	for name, call := range map[string]func() error{
		"finish":  func() error { _, err := h.Finish(ctx, f.ID, f.Revision, sdk.EndRequest{}); return err },
		"resume":  func() error { _, err := h.Resume(ctx, f.ID, f.Revision, sdk.ResumeRequest{}); return err },
		"wait":    func() error { _, err := h.SetWaiting(ctx, f.ID, f.Revision, sdk.WaitRequest{}); return err },
		"cancel":  func() error { _, err := h.RequestCancel(ctx, f.ID, f.Revision); return err },
		"newtask": func() error { _, _, err := h.CreateTask(ctx, sdk.TaskRequest{FlowID: f.ID}); return err },
	} {
		require.ErrorIs(t, call(), sdk.ErrTerminal, name)
	}
}

func TestHostCreateTask(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := sdktest.NewHost()
	f := newFlow(t, h)
	other := newFlow(t, h)

	req := sdk.TaskRequest{FlowID: f.ID, IdempotencyKey: "k1", Label: "fetch", Spec: sdk.TaskSpec{Shell: "true"}}
	t1, created, err := h.CreateTask(ctx, req)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, "cli", t1.Runtime)
	require.Equal(t, sdk.TaskQueued, t1.Status)
	require.Equal(t, f.OwnerKey, t1.OwnerKey)

	again, created, err := h.CreateTask(ctx, req)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, t1, again)

	_, _, err = h.CreateTask(ctx, sdk.TaskRequest{FlowID: other.ID, IdempotencyKey: "k1"})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	_, _, err = h.CreateTask(ctx, sdk.TaskRequest{FlowID: f.ID, Spec: sdk.TaskSpec{Shell: "x", Argv: []string{"y"}}})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	_, _, err = h.CreateTask(ctx, sdk.TaskRequest{})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	_, _, err = h.CreateTask(ctx, sdk.TaskRequest{FlowID: "flow-404"})
	require.ErrorIs(t, err, sdk.ErrNotFound)

	got, err := h.GetFlow(ctx, f.ID)
	require.NoError(t, err)
	require.Equal(t, f.Revision, got.Revision, "creating a task does not write the flow")
}

func TestHostCancel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := sdktest.NewHost()
	f := newFlow(t, h)
	queued, _, err := h.CreateTask(ctx, sdk.TaskRequest{FlowID: f.ID})
	require.NoError(t, err)
	running, _, err := h.CreateTask(ctx, sdk.TaskRequest{FlowID: f.ID})
	require.NoError(t, err)
	_, err = h.StartTask(running.ID)
	require.NoError(t, err)
	h.Ack(f.ID, 1)

	f, err = h.RequestCancel(ctx, f.ID, f.Revision)
	require.NoError(t, err)
	require.True(t, f.CancelRequested())
	require.Equal(t, sdk.FlowQueued, f.Status)
	tasks, err := h.ListTasks(ctx, f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskCancelled, tasks[0].Status)
	require.Equal(t, sdk.TaskRunning, tasks[1].Status)
	require.True(t, tasks[1].CancelRequested())
	var types []sdk.EventType
	for _, ev := range h.Events(f.ID) {
		types = append(types, ev.Type)
	}
	require.Equal(t, []sdk.EventType{sdk.EventFlowCancelRequested, sdk.EventTaskFinished}, types)

	again, err := h.RequestCancel(ctx, f.ID, f.Revision)
	require.NoError(t, err)
	require.Equal(t, f.Revision, again.Revision, "a repeated request changes nothing")

	_, _, err = h.CreateTask(ctx, sdk.TaskRequest{FlowID: f.ID})
	require.ErrorIs(t, err, sdk.ErrCancelRequested)
	_, err = h.Resume(ctx, f.ID, f.Revision, sdk.ResumeRequest{Status: sdk.FlowRunning})
	require.ErrorIs(t, err, sdk.ErrCancelRequested)

	_, err = h.FinishTask(running.ID, sdk.TaskCancelled)
	require.NoError(t, err)
	f, err = h.GetFlow(ctx, f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowCancelled, f.Status)
	_, err = h.FinishTask(queued.ID, sdk.TaskSucceeded)
	require.ErrorIs(t, err, sdk.ErrTerminal)
	_, err = h.FinishTask(queued.ID, sdk.TaskRunning)
	require.ErrorIs(t, err, sdk.ErrInvalid)
}

func TestHostLogAndContext(t *testing.T) {
	t.Parallel()
	h := sdktest.NewHost()
	fields := map[string]string{"k": "v"}
	require.NoError(t, h.Log(context.Background(), "info", "hello", fields))
	fields["k"] = "changed"
	require.Equal(t, []sdktest.LogEntry{{Level: "info", Message: "hello", Fields: map[string]string{"k": "v"}}}, h.Logs())

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := h.GetFlow(ctx, "x")
	require.ErrorIs(t, err, context.Canceled)
}
