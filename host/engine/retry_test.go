package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// ended runs a new detached task to status end and returns its flow.
func ended(t *testing.T, eng *engine.Engine, end sdk.TaskStatus) (*stored.Task, *sdk.Flow) {
	t.Helper()
	task := detached(t, eng)
	_, err := eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	task, err = eng.FinishTask(task.ID, engine.FinishInput{Status: end, Error: "why"})
	require.NoError(t, err)
	f, err := eng.GetFlow(task.FlowID)
	require.NoError(t, err)
	return task, f
}

func TestRetryKeepsTheFlowAndAddsATask(t *testing.T) {
	t.Parallel()
	for _, end := range []sdk.TaskStatus{sdk.TaskFailed, sdk.TaskTimedOut, sdk.TaskCancelled, sdk.TaskLost, sdk.TaskBlocked} {
		t.Run(string(end), func(t *testing.T) {
			t.Parallel()
			eng := newEngine(t)
			first, f := ended(t, eng, end)
			res, err := eng.RetryFlow(f.ID, f.Revision, "ann")
			require.NoError(t, err)
			require.Equal(t, 2, res.Attempt)
			require.Equal(t, first.ID, res.Task.RetryOf)
			require.Equal(t, sdk.TaskQueued, res.Task.Status)
			require.Equal(t, first.Spec, res.Task.Spec)

			got, err := eng.GetFlow(f.ID)
			require.NoError(t, err)
			require.Equal(t, sdk.FlowQueued, got.Status)
			require.Equal(t, f.Revision+1, got.Revision, "a retry is one write to the flow")
			require.True(t, got.EndedAt.IsZero())
			require.Empty(t, got.BlockedTaskID)
			tasks, err := eng.FlowTasks(f.ID)
			require.NoError(t, err)
			require.Len(t, tasks, 2)
			require.Equal(t, end, tasks[0].Status, "the earlier run keeps its end")

			h, err := eng.History(f.ID, 0, 0)
			require.NoError(t, err)
			var retry *engine.HistoryEntry
			for i := range h.Entries {
				if h.Entries[i].Kind == engine.HistoryRetry {
					retry = &h.Entries[i]
				}
			}
			require.NotNil(t, retry, "the history records the retry")
			require.Equal(t, "ann", retry.By)
			require.Contains(t, retry.Summary, "attempt 2")

			// The new run settles the flow, and a late write to the
			// earlier task (a lost mark corrected) leaves it alone.
			_, err = eng.StartTask(res.Task.ID, engine.StartInput{})
			require.NoError(t, err)
			_, err = eng.FinishTask(res.Task.ID, engine.FinishInput{Status: sdk.TaskSucceeded})
			require.NoError(t, err)
			if end == sdk.TaskLost {
				_, err = eng.CorrectLostTask(first.ID, engine.FinishInput{Status: sdk.TaskFailed, Attempt: 1}, "test")
				require.NoError(t, err)
			}
			got, err = eng.GetFlow(f.ID)
			require.NoError(t, err)
			require.Equal(t, sdk.FlowSucceeded, got.Status)
		})
	}
}

func TestRetryRefusals(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	_, f := ended(t, eng, sdk.TaskFailed)
	_, err := eng.RetryFlow(f.ID, f.Revision, "")
	require.NoError(t, err)
	var conflict *sdk.RevisionConflictError
	_, err = eng.RetryFlow(f.ID, f.Revision, "")
	require.ErrorAs(t, err, &conflict, "a second retry of the same revision")
	require.Equal(t, sdk.FlowQueued, conflict.Current.Status)

	now, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	_, err = eng.RetryFlow(f.ID, now.Revision, "")
	require.ErrorIs(t, err, sdk.ErrIllegalTransition)
	require.ErrorContains(t, err, "is queued")
	_, err = eng.RetryFlow(f.ID, 0, "")
	require.ErrorIs(t, err, sdk.ErrInvalid)

	_, done := ended(t, eng, sdk.TaskSucceeded)
	_, err = eng.RetryFlow(done.ID, done.Revision, "")
	require.ErrorIs(t, err, sdk.ErrTerminal)

	managed := createFlow(t, eng)
	managed, err = eng.Fail(managed.ID, managed.Revision, engine.EndInput{})
	require.NoError(t, err)
	_, err = eng.RetryFlow(managed.ID, managed.Revision, "")
	require.ErrorContains(t, err, "flowgate tasks flow continue "+managed.ID)

	secret, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "me", Spec: sdk.TaskSpec{Argv: []string{"true"}, SecretEnv: []string{"TOKEN"}}})
	require.NoError(t, err)
	_, err = eng.CancelTask(secret.ID)
	require.NoError(t, err)
	sf, err := eng.GetFlow(secret.FlowID)
	require.NoError(t, err)
	_, err = eng.RetryFlow(sf.ID, sf.Revision, "")
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "--secret-env")
	after, err := eng.GetFlow(sf.ID)
	require.NoError(t, err)
	require.Equal(t, sf.Revision, after.Revision, "a refused retry changes nothing")
}

// A blocked run is parked, not ended: cancelling it ends its flow
// cancelled, and a retry of that still runs it again.
func TestCancelBlockedRun(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	_, f := ended(t, eng, sdk.TaskBlocked)
	require.Equal(t, sdk.FlowBlocked, f.Status)
	res, err := eng.CancelFlow(f.ID, "bob")
	require.NoError(t, err)
	require.Equal(t, sdk.FlowCancelled, res.Flow.Status)
	require.False(t, res.Flow.EndedAt.IsZero())
	tasks, err := eng.FlowTasks(f.ID)
	require.NoError(t, err)
	require.False(t, engine.MirrorMismatch(res.Flow, tasks[0]), "the audit agrees with the cancel")
	again, err := eng.RetryFlow(f.ID, res.Flow.Revision, "bob")
	require.NoError(t, err)
	require.False(t, again.Flow.CancelRequested(), "a retry clears the cancel request")
}
