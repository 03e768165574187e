package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// TestAdoptTaskGuardsTheTakeover: a gateway restarted on the same home
// adopts the task its earlier run started; a gateway that read the task
// as the earlier run's and would mark it lost or queue it again is then
// refused, and so is a second adoption from the earlier run.
func TestAdoptTaskGuardsTheTakeover(t *testing.T) {
	t.Parallel()
	a, b := claimingEngines(t)
	task, _, err := a.CreateTask(engine.CreateTaskInput{OwnerKey: "adopt", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	_, err = a.StartTask(task.ID, engine.StartInput{Gateway: "node-a.1"})
	require.NoError(t, err)

	adopted, err := a.AdoptTask(task.ID, 1, "node-a.1", "node-a.2")
	require.NoError(t, err)
	require.Equal(t, "node-a.2", adopted.Gateway)

	_, err = b.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskLost, Attempt: 1, Gateway: "node-a.1"})
	require.ErrorIs(t, err, sdk.ErrIllegalTransition)
	require.ErrorContains(t, err, "is run by gateway node-a.2 now, not node-a.1")
	_, err = b.RequeueTask(task.ID, engine.RequeueInput{Attempt: 1, Gateway: "node-a.1"})
	require.ErrorIs(t, err, sdk.ErrIllegalTransition)
	_, err = b.AdoptTask(task.ID, 1, "node-a.1", "node-b.3")
	require.ErrorIs(t, err, sdk.ErrIllegalTransition)
	_, err = b.AdoptTask(task.ID, 2, "node-a.2", "node-b.3")
	require.ErrorIs(t, err, sdk.ErrIllegalTransition, "an attempt not running is adopted")

	got, err := b.GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status)
	require.Equal(t, "node-a.2", got.Gateway)
	_, err = b.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskLost, Attempt: 1, Gateway: "node-a.2"})
	require.NoError(t, err, "the gateway it names settles it")
}
