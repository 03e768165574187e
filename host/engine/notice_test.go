package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// noticed returns the keys of the due notices, in delivery order.
func noticed(t *testing.T, eng *engine.Engine) []string {
	t.Helper()
	due, err := eng.DueNotices(time.Now().Add(time.Hour), 100)
	require.NoError(t, err)
	var keys []string
	for _, n := range due {
		keys = append(keys, n.Status)
		var task sdk.Task
		require.NoError(t, json.Unmarshal(n.Task, &task))
		require.Equal(t, n.TaskID, task.ID, "the notice carries the record")
	}
	return keys
}

// TestFinishNotices: a task that asks for finish notices gets one when it
// is interrupted and one when it ends, queued with the change, once
// each; a cancel is reported as aborted; a task that asks for none gets
// none; a delivered notice is gone.
func TestFinishNotices(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	to := &sdk.FinishNotify{Command: "true"}
	create := func(notify *sdk.FinishNotify) *sdk.Task {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true", OnFinish: notify}})
		require.NoError(t, err)
		_, err = eng.StartTask(task.ID, engine.StartInput{})
		require.NoError(t, err)
		return task
	}

	task := create(to)
	require.Empty(t, noticed(t, eng), "starting is not reported")
	got, err := eng.InterruptTask(task.ID, 1, sdk.Interruption{Reason: "no-progress", ChildStillRunning: true})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status, "an interruption is no end")
	require.True(t, got.Interrupted.ChildStillRunning)
	_, err = eng.InterruptTask(task.ID, 1, sdk.Interruption{Reason: "budget-exceeded"})
	require.NoError(t, err)
	require.Equal(t, []string{sdk.NoticeInterrupted}, noticed(t, eng), "interrupted once")

	_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 1})
	require.NoError(t, err)
	require.Equal(t, []string{sdk.NoticeInterrupted, "succeeded"}, noticed(t, eng), "the late finish is reported too")

	require.NoError(t, eng.NoticeDelivered(task.ID+"/"+sdk.NoticeInterrupted))
	require.NoError(t, eng.NoticeFailed(task.ID+"/succeeded", "receiver down", time.Now().Add(2*time.Hour)))
	require.Empty(t, noticed(t, eng), "a failed delivery waits for its next try")

	quiet := create(nil)
	_, err = eng.FinishTask(quiet.ID, engine.FinishInput{Status: sdk.TaskFailed, Attempt: 1})
	require.NoError(t, err)
	require.Empty(t, noticed(t, eng))

	cancelled := create(to)
	_, err = eng.CancelTask(cancelled.ID)
	require.NoError(t, err)
	_, err = eng.CancelTask(cancelled.ID)
	require.NoError(t, err, "cancelling again is harmless")
	_, err = eng.FinishTask(cancelled.ID, engine.FinishInput{Status: sdk.TaskCancelled, Attempt: 1, Reason: "cancelled"})
	require.NoError(t, err)
	require.Equal(t, []string{sdk.NoticeAborted}, noticed(t, eng))
	_, err = eng.CancelTask(cancelled.ID)
	require.ErrorIs(t, err, sdk.ErrTerminal, "the controller contract: a cancelled task is ended")
	require.Equal(t, []string{sdk.NoticeAborted}, noticed(t, eng), "aborted is delivered once")
}

// TestFinishNoticeSpecChecks: on_finish and on_no_progress are checked.
func TestFinishNoticeSpecChecks(t *testing.T) {
	t.Parallel()
	for _, spec := range []sdk.TaskSpec{
		{Shell: "true", OnFinish: &sdk.FinishNotify{}},
		{Shell: "true", OnFinish: &sdk.FinishNotify{Webhook: "ftp://x"}},
		{Shell: "true", OnNoProgress: "pause"},
		{Shell: "true", Probe: "nocolon"},
	} {
		require.ErrorIs(t, engine.ValidateSpec(spec), sdk.ErrInvalid, "%+v", spec)
	}
}
