package runner_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/sdk"
)

// requireGroupGone checks that the process group of attempt n's child no
// longer exists.
func requireGroupGone(t *testing.T, h *home, id string, n int) {
	t.Helper()
	child := childOf(t, runner.LogDir(h.dir, id, n))
	require.Greater(t, child.PGID, 1)
	err := syscall.Kill(-child.PGID, 0)
	require.True(t, errors.Is(err, syscall.ESRCH), "process group %d: kill 0 gave %v, want ESRCH", child.PGID, err)
}

func TestCancelRunningTask(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	// The child of the shell keeps the group alive should the shell go.
	task := h.create(h.spec("sleep 30 & sleep 30; wait"))
	dir := runner.LogDir(h.dir, task.ID, 1)
	polltest.Until(t, "the child to start", func() bool { return childStarted(dir) })
	child := childOf(t, dir)
	polltest.Until(t, "the child's identity on the task", func() bool {
		got, err := h.eng().GetTask(task.ID)
		return err == nil && got.PID != 0
	})
	running, err := h.eng().GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, child.PID, running.PID)
	require.Equal(t, child.StartTime, running.PIDStartTime)

	asked, err := h.eng().CancelTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, asked.Status)
	require.True(t, asked.CancelRequested())

	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskCancelled, got.Status)
	require.Equal(t, "cancelled", got.Reason)
	require.Equal(t, 1, got.Attempts)
	require.Len(t, got.Errors, 1)
	require.Contains(t, got.Errors[0], "cancelled")
	requireGroupGone(t, h, task.ID, 1)
	polltest.Until(t, "the runner to let go of the task", func() bool { return h.gw.run.Running() == 0 })
}

// A cancel that comes while the shim is still starting, before it has
// recorded its identity, must still reach it: the attempt is withdrawn
// if the shim has not claimed it, else the shim is signalled.
func TestCancelWhileShimStarts(t *testing.T) {
	t.Parallel()
	var h *home
	shims := make(chan *os.Process, 1)
	h = newHome(t, func(c *runner.Config) {
		c.Launch = func(dir string, env []string) (*os.Process, error) {
			// The first attempt's directory is the task's, logs/<task>.
			if _, err := h.eng().CancelTask(filepath.Base(dir)); err != nil {
				return nil, err
			}
			p, err := launchShim(dir, env)
			if err == nil {
				shims <- p
			}
			return p, err
		}
	})
	h.start()
	task := h.create(h.spec("echo started >> ran; sleep 30"))
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskCancelled, got.Status)
	require.Equal(t, "cancelled", got.Reason)
	if childStarted(runner.LogDir(h.dir, task.ID, 1)) {
		requireGroupGone(t, h, task.ID, 1)
	}
	// A shim that found its attempt withdrawn has no identity in the
	// record for the cleanup to wait on: wait for it here, before the
	// home is removed under it.
	waitGone(t, <-shims)
}

// waitGone waits for process p, which the runner reaps, to be gone.
func waitGone(t *testing.T, p *os.Process) {
	t.Helper()
	polltest.Until(t, "shim "+strconv.Itoa(p.Pid)+" to exit", func() bool {
		return errors.Is(syscall.Kill(p.Pid, 0), syscall.ESRCH)
	})
}

// A cancel asked for while the task's shim is still starting, with the
// gateway stopping straight after, is not lost: the attempt is withdrawn,
// so the shim that comes later runs nothing, and the task ends cancelled.
func TestCancelBeforeTheShimClaimsSurvivesTheGatewayStopping(t *testing.T) {
	t.Parallel()
	release := filepath.Join(t.TempDir(), "release")
	shims := make(chan *os.Process, 1)
	h := startHome(t, func(c *runner.Config) {
		c.Launch = func(dir string, env []string) (*os.Process, error) {
			p, err := launchShim(dir, append(env, shimHoldEnv+"="+release))
			if err == nil {
				shims <- p
			}
			return p, err
		}
	})
	task := h.create(h.spec("echo started >> ran"))
	waitTask(t, h.eng(), task.ID, running, waitLimit)
	shimProc := <-shims
	asked, err := h.eng().CancelTask(task.ID)
	require.NoError(t, err)
	require.True(t, asked.CancelRequested())
	h.close() // the gateway goes, its shim not yet started

	// The shim starts late, finds the attempt withdrawn and runs nothing.
	require.NoError(t, os.WriteFile(release, nil, 0o600))
	waitGone(t, shimProc)

	h.open()
	h.start()
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskCancelled, got.Status)
	require.Equal(t, "cancelled", got.Reason)
	require.Contains(t, got.Errors[len(got.Errors)-1], "cancelled before it started")
	require.Empty(t, h.lines("ran"), "the cancelled command never ran")
}

func TestCancelQueuedTask(t *testing.T) {
	t.Parallel()
	h := startHome(t, func(c *runner.Config) { c.MaxRunning = 1 })
	first := h.create(h.spec("sleep 30"))
	waitTask(t, h.eng(), first.ID, running, waitLimit)
	second := h.create(h.spec("echo x >> ran"))
	got, err := h.eng().CancelTask(second.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskCancelled, got.Status)
	_, err = h.eng().CancelTask(first.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskCancelled, h.wait(first.ID).Status)
	// The freed slot does not start the cancelled task.
	third := h.wait(h.create(h.spec("true")).ID)
	require.Equal(t, sdk.TaskSucceeded, third.Status)
	require.Empty(t, h.lines("ran"))
	got, err = h.eng().GetTask(second.ID)
	require.NoError(t, err)
	require.Zero(t, got.Attempts)
}
