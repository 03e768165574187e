package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store/storetest"
	"github.com/flowgate/flowgate/sdk"
)

// A flow's listings read its tasks through the engine's memo of decoded
// records: a task that changed is read as it now is, a task a caller
// changed the fields of is read as stored, and a record damaged after it
// was read is reported damaged, through FlowTasks and the flow's view.
func TestFlowTasksReadTheRecordsAsStored(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	f := createFlow(t, eng)
	var ids []string
	for range 2 {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, OwnerKey: f.OwnerKey, Runtime: "cli"})
		require.NoError(t, err)
		ids = append(ids, task.ID)
	}
	statuses := func() []sdk.TaskStatus {
		t.Helper()
		tasks, err := eng.FlowTasks(f.ID)
		require.NoError(t, err)
		v, err := eng.ViewFlow(f.ID)
		require.NoError(t, err)
		require.Len(t, v.Tasks, len(tasks))
		var out []sdk.TaskStatus
		for i, task := range tasks {
			require.Equal(t, task.Status, v.Tasks[i].Status, "the view and the listing agree")
			out = append(out, task.Status)
		}
		return out
	}
	require.Equal(t, []sdk.TaskStatus{sdk.TaskQueued, sdk.TaskQueued}, statuses())

	tasks, err := eng.FlowTasks(f.ID)
	require.NoError(t, err)
	tasks[0].Status = sdk.TaskFailed
	require.Equal(t, []sdk.TaskStatus{sdk.TaskQueued, sdk.TaskQueued}, statuses(), "a caller's change is its own")

	_, err = eng.StartTask(ids[1], engine.StartInput{})
	require.NoError(t, err)
	require.Equal(t, []sdk.TaskStatus{sdk.TaskQueued, sdk.TaskRunning}, statuses(), "a changed task is read anew")

	storetest.EditRecord(t, st, "task/"+ids[0], map[string]any{"status": "exploded"})
	_, err = eng.FlowTasks(f.ID)
	requireDamaged(t, err, "task/"+ids[0], `status "exploded" is not a task status`)
	_, err = eng.ViewFlow(f.ID)
	requireDamaged(t, err, "task/"+ids[0], `status "exploded" is not a task status`)
}
