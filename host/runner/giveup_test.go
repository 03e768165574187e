package runner_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// stallThenWait reports progress once, then waits, silent, until the
// file "go" exists, and succeeds.
const stallThenWait = `echo '{"fraction":0.1}' >> "$FLOWGATE_PROGRESS"; while [ ! -f go ]; do sleep 0.02; done; echo done`

// TestGiveUpKeepsTheChild: with on_no_progress keep, a spent no-progress
// budget marks the task interrupted and leaves the child running; the
// child's late finish is still recorded as the task's end.
func TestGiveUpKeepsTheChild(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	spec := h.spec(stallThenWait)
	spec.NoProgressBudget, spec.OnNoProgress = sdk.Duration(100*time.Millisecond), sdk.NoProgressKeep
	task := h.create(spec)
	got := waitTask(t, h.eng(), task.ID, func(t *stored.Task) bool { return t.Interrupted != nil }, waitLimit)
	require.Equal(t, sdk.TaskRunning, got.Status)
	require.Equal(t, "no-progress", got.Interrupted.Reason)
	require.True(t, got.Interrupted.ChildStillRunning)

	require.NoError(t, os.WriteFile(h.path("go"), nil, 0o600))
	got = h.wait(task.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status, "the late finish is the real result")
	require.Equal(t, "done\n", got.Result.Stdout)
	require.NotNil(t, got.Interrupted, "the give-up stays on the record")
}

// TestGiveUpStopsTheChild: without keep, a spent no-progress budget
// stops the child; the task is marked interrupted, child stopped, and
// ends timed_out as before.
func TestGiveUpStopsTheChild(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	spec := h.spec(stallThenWait)
	spec.NoProgressBudget = sdk.Duration(100 * time.Millisecond)
	got := h.wait(h.create(spec).ID)
	require.Equal(t, sdk.TaskTimedOut, got.Status)
	require.Equal(t, "no-progress", got.Reason)
	require.NotNil(t, got.Interrupted)
	require.False(t, got.Interrupted.ChildStillRunning)
}
