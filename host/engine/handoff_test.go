package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// The end of one task and the start of the next are one commit, and the
// slot passes at one instant: the first ends when the second starts.
func TestFinishAndStartIsOneCommit(t *testing.T) {
	t.Parallel()
	eng, commits := countingEngine(t)
	first, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	next, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	_, err = eng.StartTask(first.ID, engine.StartInput{})
	require.NoError(t, err)

	before := commits.Load()
	ended, started, err := eng.FinishAndStart(first.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 1}, next.ID, engine.StartInput{Gateway: "g"})
	require.NoError(t, err)
	require.Equal(t, int64(1), commits.Load()-before, "commits of an end and a start")
	require.Equal(t, sdk.TaskSucceeded, ended.Status)
	require.Equal(t, sdk.TaskRunning, started.Status)
	require.Equal(t, 1, started.Attempts)
	require.Equal(t, "g", started.Gateway)
	require.Equal(t, ended.EndedAt, started.StartedAt, "the slot passes at one instant")
	got, err := eng.GetTask(next.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status)
}

// A next task that can no longer start is left alone, and the end is
// recorded all the same; a refused end records nothing, not the start.
func TestFinishAndStartRefusals(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	task := func() *stored.Task {
		tk, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true"}})
		require.NoError(t, err)
		return tk
	}
	a, b, c := task(), task(), task()
	_, err := eng.StartTask(a.ID, engine.StartInput{})
	require.NoError(t, err)
	_, err = eng.StartTask(b.ID, engine.StartInput{Gateway: "other"})
	require.NoError(t, err)

	ended, started, err := eng.FinishAndStart(a.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 1}, b.ID, engine.StartInput{})
	require.NoError(t, err, "a next task started elsewhere")
	require.Nil(t, started)
	require.Equal(t, sdk.TaskSucceeded, ended.Status)
	got, err := eng.GetTask(b.ID)
	require.NoError(t, err)
	require.Equal(t, "other", got.Gateway, "the next task is left as it was")

	_, _, err = eng.FinishAndStart(a.ID, engine.FinishInput{Status: sdk.TaskFailed, Attempt: 1}, c.ID, engine.StartInput{})
	require.ErrorIs(t, err, sdk.ErrTerminal, "an end recorded already")
	got, err = eng.GetTask(c.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskQueued, got.Status, "a refused end starts nothing")
}

// A start that fails after the next task was written (here its flow's
// record is gone, so the flow cannot follow it) is no refusal: the whole
// hand-over fails and records nothing, rather than commit a running task
// no runner runs.
func TestFinishAndStartFailingStartRecordsNothing(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	a, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	b, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	_, err = eng.StartTask(a.ID, engine.StartInput{})
	require.NoError(t, err)
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error { return tx.Delete("flow/" + b.FlowID) }))

	_, started, err := eng.FinishAndStart(a.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 1}, b.ID, engine.StartInput{})
	require.ErrorIs(t, err, sdk.ErrNotFound, "the next task's flow is gone")
	require.Nil(t, started)
	got, err := eng.GetTask(b.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskQueued, got.Status, "the next task was not started")
	got, err = eng.GetTask(a.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status, "the end was not recorded either")
}
