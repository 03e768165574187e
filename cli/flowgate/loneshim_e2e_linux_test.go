package main_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/sdk"
)

// A flowgate binary with no flowgate-shim beside it (go install
// ./cli/flowgate, go run) pools shims of its own, "flowgate shim
// --warm": tasks run one after another reuse them, and a SIGKILL of the
// gateway takes the idle ones with it.
func TestLoneFlowgatePoolsItsOwnShims(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, err := exec.Command("go", "build", "-o", dir, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	bin := filepath.Join(dir, "flowgate")
	home, work, logf := e2eDirs(t)
	g := startGateway(t, bin, home, logf)
	ctx := context.Background()

	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	defer c.Close()
	seen := map[shim.ProcInfo]bool{}
	const n = 4
	for range n {
		task, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "e2e", Spec: sdk.TaskSpec{Argv: []string{"true"}, Cwd: work}})
		require.NoError(t, err)
		polltest.Until(t, "", func() (bool, string) {
			task, err = c.ResolveTask(ctx, task.ID)
			require.NoError(t, err)
			return task.Status.Terminal(), "task " + task.ID + " is " + string(task.Status)
		}, polltest.Within(30*time.Second), polltest.Every(20*time.Millisecond))
		require.Equal(t, sdk.TaskSucceeded, task.Status, "errors: %q", task.Errors)
		seen[shimOfTask(t, home, task.ID)] = true
	}
	require.Less(t, len(seen), n, "%d tasks one after another ran under %d shims", n, len(seen))

	var idle []shim.ProcInfo
	polltest.Until(t, "", func() (bool, string) {
		idle = processesRunning(bin + "\x00shim\x00" + shim.WarmArg + "\x00")
		return len(idle) > 0, "no \"flowgate shim " + shim.WarmArg + "\" waits in the pool"
	}, polltest.Within(20*time.Second), polltest.Every(20*time.Millisecond))
	reused := false
	for _, p := range idle {
		reused = reused || seen[p]
	}
	require.True(t, reused, "a shim that ran a task waits in the pool again: idle %v, ran %v", idle, seen)
	g.kill(t)
	for _, p := range idle {
		polltest.Until(t, fmt.Sprintf("the idle shim %d to exit with its SIGKILLed gateway", p.PID), func() bool { return !shim.Alive(p) }, polltest.Within(20*time.Second), polltest.Every(50*time.Millisecond))
	}
}
