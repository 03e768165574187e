package runner_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/sdk"
)

// warmShims returns the Shims of a stand-in flowgate whose lean shim is
// this test binary (TestMain runs it as one), both links to the same
// file, so of the same version.
func warmShims(t *testing.T) *runner.Shims {
	t.Helper()
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	bin := t.TempDir()
	exe := filepath.Join(bin, "flowgate")
	require.NoError(t, os.Symlink(self, exe))
	require.NoError(t, os.Symlink(self, filepath.Join(bin, runner.ShimBinary)))
	return runner.NewShims(exe, nil)
}

// waitWarm waits for a warm shim to wait for the next attempt and returns
// its identity.
func waitWarm(t *testing.T, s *runner.Shims) shim.ProcInfo {
	t.Helper()
	waitFor(t, "a warm shim", func() bool { return s.WarmPID() != 0 })
	p := shim.ProcInfo{PID: s.WarmPID()}
	var err error
	p.StartTime, err = shim.StartTime(p.PID)
	require.NoError(t, err)
	require.True(t, shim.Alive(p), "the warm shim %d waits", p.PID)
	return p
}

// A task started while a warm shim waits runs under that shim: the
// attempt's record names the warm shim's process (pid and start time),
// the one the runner follows, and a new warm shim takes its place.
func TestTaskStartsInTheWarmShim(t *testing.T) {
	t.Parallel()
	shims := warmShims(t)
	h := startHome(t, func(c *runner.Config) { c.Launch, c.Shims = nil, shims })
	require.Zero(t, shims.WarmPID(), "no warm shim before the first task")
	first := h.wait(h.create(h.spec("true")).ID)
	require.Equal(t, sdk.TaskSucceeded, first.Status, "errors: %q", first.Errors)
	warm := waitWarm(t, shims)

	task := h.create(h.spec("echo \"$FLOWGATE_TASK_ID\" > ran"))
	done := h.wait(task.ID)
	require.Equal(t, sdk.TaskSucceeded, done.Status, "errors: %q", done.Errors)
	require.Equal(t, []string{task.ID}, h.lines("ran"))
	rec, err := shim.ReadRecord(runner.LogDir(h.dir, task.ID, 1))
	require.NoError(t, err)
	require.NotNil(t, rec.Shim)
	require.Equal(t, warm.PID, rec.Shim.PID, "the attempt ran under the warm shim")
	require.Equal(t, warm.StartTime, rec.Shim.StartTime, "the record names the warm shim's process, not a reused pid")

	next := waitWarm(t, shims)
	require.NotEqual(t, warm.PID, next.PID, "a new warm shim waits for the next task")
}

// A runner that stops takes its warm shim with it: when Stop returns,
// the shim has exited and been reaped, and it left no attempt behind.
func TestStoppedRunnerLeavesNoWarmShim(t *testing.T) {
	t.Parallel()
	shims := warmShims(t)
	h := startHome(t, func(c *runner.Config) { c.Launch, c.Shims = nil, shims })
	task := h.create(h.spec("true"))
	h.wait(task.ID)
	warm := waitWarm(t, shims)
	h.close()
	require.False(t, shim.Alive(warm), "the warm shim %d outlived its runner", warm.PID)
	require.Zero(t, shims.WarmPID())
	logs, err := filepath.Glob(filepath.Join(h.dir, "logs", "*"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(h.dir, "logs", task.ID)}, logs, "a warm shim with no attempt writes nothing")
}
