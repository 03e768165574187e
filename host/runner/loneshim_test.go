package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
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
	runSixOnReusedShims(t, h)

	warm := waitWarm(t, shims)
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", warm.PID))
	if err == nil { // Linux; elsewhere the pool's pids say enough
		require.Equal(t, exe+"\x00shim\x00"+shim.WarmArg+"\x00", string(cmdline), "the idle shim is the flowgate binary's own")
	}
	h.close()
	require.False(t, shim.Alive(warm), "the idle shim %d outlived its runner", warm.PID)
}
