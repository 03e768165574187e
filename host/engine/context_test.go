package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// An engine bound to a context that ended makes no store call, reading
// or writing, and says why with the context's error; the engine it was
// bound from, and one bound to a live context, go on as before.
func TestEngineBoundToAnEndedContextCallsNoStore(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	task := detached(t, eng)
	ended, cancel := context.WithCancel(t.Context())
	cancel()
	gone := eng.WithContext(ended)

	_, err := gone.GetTask(task.ID)
	require.ErrorIs(t, err, context.Canceled)
	_, err = gone.StartTask(task.ID, engine.StartInput{})
	require.ErrorIs(t, err, context.Canceled)

	got, err := eng.GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskQueued, got.Status, "the refused start wrote nothing")
	started, err := eng.WithContext(t.Context()).StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, started.Status)
}
