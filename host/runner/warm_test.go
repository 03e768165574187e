package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/polltest"
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

// waitWarm waits for a shim to wait in the pool for the next attempt
// and returns the identity of the one the next attempt goes to.
func waitWarm(t *testing.T, s *runner.Shims) shim.ProcInfo {
	t.Helper()
	polltest.Until(t, "a warm shim", func() bool { return len(s.IdlePIDs()) > 0 })
	pids := s.IdlePIDs()
	p := shim.ProcInfo{PID: pids[len(pids)-1]}
	var err error
	p.StartTime, err = shim.StartTime(p.PID)
	require.NoError(t, err)
	require.True(t, shim.Alive(p), "the warm shim %d waits", p.PID)
	return p
}

// A task started while a warm shim waits runs under that shim: the
// attempt's record names the warm shim's process (pid and start time),
// the one the runner follows, and once its end is recorded the shim
// waits in the pool for the next task.
func TestTaskStartsInTheWarmShim(t *testing.T) {
	t.Parallel()
	shims := warmShims(t)
	h := startHome(t, func(c *runner.Config) { c.Launch, c.Shims = nil, shims })
	require.Empty(t, shims.IdlePIDs(), "no warm shim before the first task")
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

	polltest.Until(t, "the shim back in the pool", func() bool { return slices.Contains(shims.IdlePIDs(), warm.PID) })
	require.True(t, shim.Alive(warm), "the shim waits for the next task")
}

// Tasks run one after another go to the shims of the pool: a shim whose
// task's end is recorded runs a later task, under the same process (pid
// and start time), and each task still gets its own record, its own
// environment and the right outcome.
func TestTasksRunOnReusedShims(t *testing.T) {
	t.Parallel()
	shims := warmShims(t)
	h := startHome(t, func(c *runner.Config) { c.Launch, c.Shims = nil, shims })
	runSixOnReusedShims(t, h)
}

// An idle shim waits IdleTimeout for a task, then exits, having written
// nothing.
func TestIdleShimExitsAfterItsTimeout(t *testing.T) {
	t.Parallel()
	shims := warmShims(t)
	shims.IdleTimeout = 2 * time.Second
	h := startHome(t, func(c *runner.Config) { c.Launch, c.Shims = nil, shims })
	task := h.create(h.spec("true"))
	h.wait(task.ID)
	warm := waitWarm(t, shims)
	polltest.Until(t, fmt.Sprintf("the idle shim %d to exit after its timeout", warm.PID), func() bool { return !shim.Alive(warm) })
	require.Empty(t, shims.IdlePIDs())
	logs, err := filepath.Glob(filepath.Join(h.dir, "logs", "*"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(h.dir, "logs", task.ID)}, logs, "an idle shim writes nothing")
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
	require.Empty(t, shims.IdlePIDs())
	logs, err := filepath.Glob(filepath.Join(h.dir, "logs", "*"))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(h.dir, "logs", task.ID)}, logs, "a warm shim with no attempt writes nothing")
}

// runSixOnReusedShims runs six tasks one after another on h, whose
// runner pools its shims, and requires that they shared shims (the same
// pid and start time in their attempts' records) while each kept its own
// environment and outcome.
func runSixOnReusedShims(t *testing.T, h *home) {
	t.Helper()
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
}

// A task handed to a pooled shim has its record read once, when its end
// wakes the runner: not as it is launched, when the shim has at most
// claimed it. With no poll tick in between, that one read settles it.
func TestPooledTaskRecordIsReadOnceAtItsEnd(t *testing.T) {
	t.Parallel()
	shims := warmShims(t)
	h := startHome(t, func(c *runner.Config) { c.Launch, c.Shims, c.Poll = nil, shims, time.Hour })
	first := h.wait(h.create(h.spec("true")).ID)
	require.Equal(t, sdk.TaskSucceeded, first.Status, "errors: %q", first.Errors)
	waitWarm(t, shims)

	before := h.gw.run.RecordReads()
	task := h.wait(h.create(h.spec("true")).ID)
	require.Equal(t, sdk.TaskSucceeded, task.Status, "errors: %q", task.Errors)
	require.Equal(t, int64(1), h.gw.run.RecordReads()-before, "record reads for one pooled task")
	require.Zero(t, task.PID, "a task that ended by the first read has its end recorded, not its processes")
}
