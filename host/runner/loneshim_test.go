package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/sdk"
)

// loneShims returns the Shims of a stand-in flowgate with no lean shim
// beside it (as go install ./cli/flowgate or go run leave it): this test
// binary, linked as flowgate, which TestMain runs as "flowgate shim".
func loneShims(t *testing.T) (*runner.Shims, string) {
	t.Helper()
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	exe := filepath.Join(t.TempDir(), "flowgate")
	require.NoError(t, os.Symlink(self, exe))
	return runner.NewShims(exe, nil), exe
}

// Without the lean shim, the pool keeps "flowgate shim --warm"
// processes: tasks run one after another reuse them (the same shim pid
// and start time in their attempts' records), and each task still gets
// its own record, environment and outcome.
func TestLoneFlowgateReusesItsOwnShims(t *testing.T) {
	t.Parallel()
	shims, exe := loneShims(t)
	h := startHome(t, func(c *runner.Config) { c.Launch, c.Shims = nil, shims })
	const n = 6
	runs := map[shim.ProcInfo][]string{}
	for i := range n {
		spec := h.spec(fmt.Sprintf("echo \"$(env | grep -c ^ONLY_)\" >> ran; exit %d", i%2))
		spec.Env = map[string]string{fmt.Sprintf("ONLY_%d", i): "set"}
		task := h.create(spec)
		done := h.wait(task.ID)
		want := []sdk.TaskStatus{sdk.TaskSucceeded, sdk.TaskFailed}[i%2]
		require.Equal(t, want, done.Status, "task %d: errors: %q", i, done.Errors)
		s := shimOf(t, runner.LogDir(h.dir, task.ID, 1))
		s.StartedAt = time.Time{}
		runs[s] = append(runs[s], task.ID)
	}
	require.Less(t, len(runs), n-1, "%d tasks ran under %d shims: %v", n, len(runs), runs)
	b, err := os.ReadFile(h.path("ran"))
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("1\n", n), string(b), "each task ran once and saw only its own environment")

	warm := waitWarm(t, shims)
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", warm.PID))
	if err == nil { // Linux; elsewhere the pool's pids say enough
		require.Equal(t, exe+"\x00shim\x00"+shim.WarmArg+"\x00", string(cmdline), "the idle shim is the flowgate binary's own")
	}
	h.close()
	require.False(t, shim.Alive(warm), "the idle shim %d outlived its runner", warm.PID)
}
