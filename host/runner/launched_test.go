package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

func TestLaunched(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	claimed := &stored.Task{Task: sdk.Task{ID: "claimed", Status: sdk.TaskRunning, Attempts: 2}}
	dir := runner.LogDir(home, claimed.ID, claimed.Attempts)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, shim.InfoFile), []byte("{}"), 0o600))
	for _, c := range []struct {
		task *stored.Task
		want bool
	}{
		{&stored.Task{Task: sdk.Task{ID: "done", Status: sdk.TaskSucceeded}}, true},
		{&stored.Task{Task: sdk.Task{ID: "retry", Status: sdk.TaskQueued, RetryAt: time.Now()}}, true},
		{&stored.Task{Task: sdk.Task{ID: "queued", Status: sdk.TaskQueued}}, false},
		{&stored.Task{Task: sdk.Task{ID: "unclaimed", Status: sdk.TaskRunning, Attempts: 1}}, false},
		{claimed, true},
	} {
		require.Equal(t, c.want, runner.Launched(home, c.task), c.task.ID)
	}
}

func TestAwaitLaunchedRereadsUntilLaunched(t *testing.T) {
	t.Parallel()
	reads := 0
	get := func(_ context.Context, id string) (*stored.Task, error) {
		reads++
		status := sdk.TaskQueued
		if reads == 3 {
			status = sdk.TaskFailed
		}
		return &stored.Task{Task: sdk.Task{ID: id, Status: status}}, nil
	}
	got, err := runner.AwaitLaunched(t.Context(), t.TempDir(), &stored.Task{Task: sdk.Task{ID: "t", Status: sdk.TaskQueued}}, get)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskFailed, got.Status)
	require.Equal(t, 3, reads)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = runner.AwaitLaunched(ctx, t.TempDir(), &stored.Task{Task: sdk.Task{ID: "t", Status: sdk.TaskQueued}}, get)
	require.ErrorIs(t, err, context.Canceled)
}
