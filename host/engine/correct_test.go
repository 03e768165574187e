package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// lostAtFirstAttempt starts task and marks its first attempt lost, as a
// gateway that took it for gone does.
func lostAtFirstAttempt(t *testing.T, eng *engine.Engine, task *stored.Task) {
	t.Helper()
	_, err := eng.StartTask(task.ID, engine.StartInput{Gateway: "node-a.1"})
	require.NoError(t, err)
	_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskLost, Attempt: 1, Reason: "lost", Error: "attempt 1: lost: gateway node-a.1 left"})
	require.NoError(t, err)
}

// TestCorrectLostTaskOfAMirroredFlow: a detached task marked lost whose
// attempt in fact succeeded is corrected, with its one-task flow, its
// status index and a correction in the history naming the evidence; the
// state machine still refuses every move out of lost.
func TestCorrectLostTaskOfAMirroredFlow(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	task := detached(t, eng)
	lostAtFirstAttempt(t, eng, task)
	f, err := eng.GetFlow(task.FlowID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowLost, f.Status)

	_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded})
	require.ErrorIs(t, err, sdk.ErrTerminal, "a correction is no transition")
	_, err = eng.CorrectLostTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 2}, "from x")
	require.ErrorIs(t, err, sdk.ErrIllegalTransition, "another attempt's record corrects nothing")
	_, err = eng.CorrectLostTask(task.ID, engine.FinishInput{Status: sdk.TaskLost, Attempt: 1}, "from x")
	require.ErrorIs(t, err, sdk.ErrInvalid)

	code := 0
	done, err := eng.CorrectLostTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 1, ExitCode: &code},
		"from the shim record of gateway node-b.2")
	require.NoError(t, err)
	require.Equal(t, sdk.TaskSucceeded, done.Status)
	require.Equal(t, 0, *done.ExitCode)
	require.Contains(t, done.Errors[len(done.Errors)-1], "corrected: lost → succeeded from the shim record of gateway node-b.2")

	_, err = eng.CorrectLostTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 1}, "again")
	require.ErrorIs(t, err, sdk.ErrIllegalTransition, "a task is corrected once")

	page, err := eng.ListTasks(engine.TaskFilter{Status: sdk.TaskSucceeded})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 1)
	page, err = eng.ListTasks(engine.TaskFilter{Status: sdk.TaskLost})
	require.NoError(t, err)
	require.Empty(t, page.Tasks)
	f, err = eng.GetFlow(task.FlowID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowSucceeded, f.Status)

	kinds, entries := historyKinds(t, eng, task.FlowID)
	require.Contains(t, kinds, engine.HistoryTaskCorrected)
	require.Contains(t, kinds, engine.HistoryCorrected)
	require.NotContains(t, kinds[len(kinds)-2:], engine.HistoryStatus, "the flow's correction is no status move")
	for _, e := range entries {
		if e.Kind == engine.HistoryTaskCorrected || e.Kind == engine.HistoryCorrected {
			require.Contains(t, e.Summary, "lost → succeeded from the shim record of gateway node-b.2")
		}
	}
}

// TestCorrectLostTaskTellsTheController: a managed flow's controller,
// told its task was lost, gets a second task.finished with the real
// outcome and the status it corrects.
func TestCorrectLostTaskTellsTheController(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, OwnerKey: f.OwnerKey, Spec: sdk.TaskSpec{Argv: []string{"false"}}})
	require.NoError(t, err)
	lostAtFirstAttempt(t, eng, task)
	code := 3
	_, err = eng.CorrectLostTask(task.ID, engine.FinishInput{Status: sdk.TaskFailed, Attempt: 1, ExitCode: &code, Error: "attempt 1: exit code 3"},
		"from the shim record of gateway node-a.1")
	require.NoError(t, err)

	evs, err := eng.Events(f.ID)
	require.NoError(t, err)
	var finished []map[string]any
	for _, ev := range evs {
		if ev.Type == sdk.EventTaskFinished {
			var body map[string]any
			require.NoError(t, json.Unmarshal(ev.Data, &body))
			finished = append(finished, body)
		}
	}
	require.Len(t, finished, 2)
	require.Equal(t, "lost", finished[0]["status"])
	require.Equal(t, "failed", finished[1]["status"])
	require.Equal(t, float64(3), finished[1]["exit_code"])
	require.Equal(t, "lost", finished[1]["corrected_from"])
}
