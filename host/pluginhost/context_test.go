package pluginhost_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/sdk"
)

// The in-process Host hands the controller's context to the engine: a
// call made with a context that ended reads and writes nothing and fails
// with the context's error.
func TestHostCallsCarryTheControllersContext(t *testing.T) {
	t.Parallel()
	eng := conformanceEngine(t)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "me", ControllerID: conformanceController, Goal: "g"})
	require.NoError(t, err)
	h := pluginhost.NewHost(eng, conformanceController, nil)
	ended, cancel := context.WithCancel(t.Context())
	cancel()

	_, err = h.GetFlow(ended, f.ID)
	require.ErrorIs(t, err, context.Canceled)
	_, _, err = h.CreateTask(ended, sdk.TaskRequest{FlowID: f.ID, IdempotencyKey: "k", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	require.ErrorIs(t, err, context.Canceled)
	tasks, err := h.ListTasks(t.Context(), f.ID)
	require.NoError(t, err)
	require.Empty(t, tasks, "the refused call created no task")
}
