package gateway_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// A task run while its gateway has a slot free and none waits is started
// by the commit that creates it, and runs; while the slot is taken, the
// next one waits in the queue and starts when the slot frees up, as
// before.
func TestATaskRunWithASlotFreeStartsAtItsCreation(t *testing.T) {
	t.Parallel()
	var fc gateway.FileConfig
	fc.Limits.MaxRunning = 1
	_, c, _ := startConfigured(t, fc)
	ctx := context.Background()
	run := func(shell string) *stored.Task {
		task, created, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: shell}})
		require.NoError(t, err)
		require.True(t, created)
		return task
	}
	until := func(id string, status sdk.TaskStatus) *stored.Task {
		var got *stored.Task
		polltest.Until(t, "task "+id+" "+string(status), func() (bool, string) {
			var err error
			if got, err = c.ResolveTask(ctx, id); err != nil {
				return false, err.Error()
			}
			return got.Status == status, string(got.Status)
		})
		return got
	}

	long := run("sleep 60")
	require.Equal(t, sdk.TaskRunning, long.Status, "started by its creating commit")
	require.Equal(t, long.CreatedAt, long.StartedAt)
	polltest.Until(t, "the long task's child runs", func() bool {
		got, err := c.ResolveTask(ctx, long.ID)
		return err == nil && got.PID != 0
	})

	next := run("true")
	require.Equal(t, sdk.TaskQueued, next.Status, "the only slot is taken: it waits")
	_, err := c.CancelTask(ctx, long.ID)
	require.NoError(t, err)
	done := until(next.ID, sdk.TaskSucceeded)
	require.True(t, done.StartedAt.After(done.CreatedAt), "started from the queue, after its creation")

	last := run("true")
	require.Equal(t, sdk.TaskRunning, last.Status, "the slot is free again and none waits")
	until(last.ID, sdk.TaskSucceeded)
	requireNoTaskQueued(t, c)
}

func requireNoTaskQueued(t *testing.T, c api.Client) {
	t.Helper()
	page, err := c.ListTasks(context.Background(), apitype.TaskFilter{Status: sdk.TaskQueued})
	require.NoError(t, err)
	require.Empty(t, page.Tasks)
}
