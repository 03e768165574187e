package cli_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/store/backend"
	"github.com/flowgate/flowgate/sdk"
)

// The log of a task another gateway of the installation ran is in that
// gateway's home: tasks logs says where, and fails, instead of printing
// nothing as if the task had written nothing.
func TestLogsOfAnotherGatewaysTaskSaysWhereTheyAre(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var id string
	seed(t, home, func(eng *engine.Engine) {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true"}})
		require.NoError(t, err)
		_, err = eng.StartTask(task.ID, engine.StartInput{Gateway: "far.9"})
		require.NoError(t, err)
		id = task.ID
	})
	for _, args := range [][]string{{"tasks", "logs", id}, {"tasks", "logs", "--stderr", id}} {
		code, out, errOut := run(t, home, args...)
		require.Equal(t, 1, code, errOut)
		require.Empty(t, out)
		require.Contains(t, errOut, "the log of this task is on host far (gateway far.9), which is not reachable from here")
		require.Contains(t, errOut, "run flowgate tasks logs "+id+" on that host")
	}
}

// Through a gateway's socket, tasks logs reads the log where the gateway
// finds it: here, a task another gateway on this machine ran from its
// own home. Before, it printed nothing.
func TestLogsThroughAGatewayReadAnotherHomesLog(t *testing.T) {
	t.Parallel()
	url, _ := etcdInstallation(t)
	ctx := context.Background()
	start := func(home string) *gateway.Gateway {
		g, err := gateway.New(gateway.Config{Home: home, Store: backend.Spec{URL: url}})
		require.NoError(t, err)
		require.NoError(t, g.Start(ctx))
		t.Cleanup(func() { g.Stop(ctx) })
		return g
	}
	a := start(shortHome(t))
	task, _, err := a.Client().RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "echo from-a-$((1+1))"}})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, err := a.Client().ResolveTask(ctx, task.ID)
		return err == nil && got.Status == sdk.TaskSucceeded
	}, 30*time.Second, 20*time.Millisecond, "the task never succeeded")
	homeB := shortHome(t)
	start(homeB)
	code, out, errOut := run(t, homeB, "tasks", "logs", task.ID)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "from-a-2\n", out)
}
