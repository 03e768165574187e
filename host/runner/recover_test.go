package runner_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// The recovery tests build by hand what a gateway that died left behind:
// a task recorded as running attempt 1 and some of the files of its
// attempt directory. Then they start a runner.

// createRunning stores a task as running its first attempt, as the runner
// records it before it launches the shim, and returns it with its attempt
// directory, made with the spec the runner would write.
func (h *home) createRunning(spec sdk.TaskSpec) (*stored.Task, string) {
	h.t.Helper()
	task, _, err := h.eng().CreateTask(engine.CreateTaskInput{OwnerKey: "t", Spec: spec, Status: sdk.TaskRunning})
	require.NoError(h.t, err)
	require.Equal(h.t, 1, task.Attempts)
	dir := runner.LogDir(h.dir, task.ID, 1)
	require.NoError(h.t, os.MkdirAll(dir, 0o700))
	require.NoError(h.t, shim.WriteSpec(dir, shim.Spec{
		TaskID: task.ID, FlowID: task.FlowID, Attempt: 1, Shell: spec.Shell, Cwd: spec.Cwd,
		ProgressPath: filepath.Join(h.dir, "logs", task.ID, "progress.jsonl"),
	}))
	return task, dir
}

// writeJSON writes v as the file name of attempt directory dir.
func writeJSON(t *testing.T, dir, name string, v any) {
	t.Helper()
	require.NoError(t, shim.WriteJSONAtomic(filepath.Join(dir, name), v))
}

// impostor is the identity of live process pid with a start time it does
// not have: what shim.json says after the pid was reused.
func impostor(t *testing.T, pid int) shim.ProcInfo {
	t.Helper()
	st, err := shim.StartTime(pid)
	require.NoError(t, err)
	return shim.ProcInfo{PID: pid, PGID: pid, StartTime: st + 1, StartedAt: time.Now()}
}

// decoy starts a process that leads a process group of its own and must
// survive the test untouched.
func decoy(t *testing.T) shim.ProcInfo {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	st, err := shim.StartTime(cmd.Process.Pid)
	require.NoError(t, err)
	return shim.ProcInfo{PID: cmd.Process.Pid, PGID: cmd.Process.Pid, StartTime: st}
}

func TestRecoverLostTask(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		retry   *sdk.RetryPolicy
		status  sdk.TaskStatus
		ran     []string
		attempt int
		errText string
	}{
		{"no policy", nil, sdk.TaskLost, nil, 1, "not re-run"},
		{"retries but not safe to repeat", &sdk.RetryPolicy{MaxAttempts: 3, Backoff: sdk.Duration(10 * time.Millisecond)},
			sdk.TaskLost, nil, 1, "not re-run"},
		{"safe to repeat", &sdk.RetryPolicy{SafeToRepeat: true, MaxAttempts: 2, Backoff: sdk.Duration(10 * time.Millisecond)},
			sdk.TaskSucceeded, []string{"2"}, 2, "lost"},
		{"safe to repeat, no attempts left", &sdk.RetryPolicy{SafeToRepeat: true, MaxAttempts: 1},
			sdk.TaskLost, nil, 1, "lost"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHome(t, nil)
			spec := h.spec(`echo "$FLOWGATE_ATTEMPT" >> ran`)
			spec.Retry = c.retry
			task, dir := h.createRunning(spec)
			// shim.json names a live process, this test, but not the one
			// that started: the pid was reused. child.json likewise
			// names a live process group that is not the task's.
			writeJSON(t, dir, shim.InfoFile, impostor(t, os.Getpid()))
			other := decoy(t)
			fake := other
			fake.StartTime++
			writeJSON(t, dir, shim.ChildFile, fake)
			h.start()

			got := h.wait(task.ID)
			require.Equal(t, c.status, got.Status, "errors: %q", got.Errors)
			require.Equal(t, c.attempt, got.Attempts)
			require.Equal(t, c.ran, h.lines("ran"))
			require.NotEmpty(t, got.Errors)
			require.Contains(t, got.Errors[0], "attempt 1: lost")
			require.Contains(t, got.Errors[0], c.errText)
			if c.status == sdk.TaskLost {
				require.Equal(t, "lost", got.Reason)
				require.Nil(t, got.ExitCode)
			}
			require.True(t, shim.Alive(other), "the process named with the wrong start time was killed")
			require.NoError(t, syscall.Kill(other.PID, 0))
		})
	}
}

func TestRecoverSettlesEndedTask(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status shim.Status
		stdout string
		stderr string
		want   sdk.TaskStatus
		reason string
		errs   []string
	}{
		{"succeeded", shim.Status{ExitCode: 0}, "partial\nhello\n", "", sdk.TaskSucceeded, "", nil},
		{"failed", shim.Status{ExitCode: 3}, "", "oops\n", sdk.TaskFailed, "", []string{"attempt 1: exit code 3: oops"}},
		{"timed out", shim.Status{ExitCode: shim.SignalExit(syscall.SIGTERM), Signal: "SIGTERM", Reason: "timeout"}, "", "",
			sdk.TaskTimedOut, "timeout", []string{"attempt 1: stopped: it ran past its timeout"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHome(t, nil)
			task, dir := h.createRunning(h.spec("echo x >> ran"))
			writeJSON(t, dir, shim.InfoFile, impostor(t, os.Getpid()))
			require.NoError(t, os.WriteFile(filepath.Join(dir, shim.StdoutFile), []byte(c.stdout), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(dir, shim.StderrFile), []byte(c.stderr), 0o600))
			c.status.StartedAt, c.status.EndedAt = time.Now().Add(-time.Second), time.Now()
			writeJSON(t, dir, shim.StatusFile, c.status)
			h.start()

			got := h.wait(task.ID)
			require.Equal(t, c.want, got.Status)
			require.Equal(t, c.reason, got.Reason)
			require.Equal(t, c.errs, got.Errors)
			require.Equal(t, 1, got.Attempts)
			require.NotNil(t, got.ExitCode)
			require.Equal(t, c.status.ExitCode, *got.ExitCode)
			require.Equal(t, sha(c.stdout), got.Result.StdoutSHA256)
			require.Equal(t, int64(len(c.stdout)), got.Result.StdoutBytes)
			require.Empty(t, h.lines("ran"), "the command ran again")
		})
	}
}

func TestRecoverUnclaimedAttempt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		noDir  bool
		cancel bool
	}{
		{"spec written", false, false},
		{"nothing written", true, false},
		{"cancel requested", false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHome(t, nil)
			task, dir := h.createRunning(h.spec(`echo "$FLOWGATE_ATTEMPT" >> ran`))
			if c.noDir {
				require.NoError(t, os.RemoveAll(dir))
			}
			if c.cancel {
				_, err := h.eng().CancelTask(task.ID)
				require.NoError(t, err)
			}
			h.start()

			got := h.wait(task.ID)
			if c.cancel {
				require.Equal(t, sdk.TaskCancelled, got.Status)
				require.Equal(t, "cancelled", got.Reason)
				require.Equal(t, 1, got.Attempts)
				require.Empty(t, h.lines("ran"))
			} else {
				require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
				require.Equal(t, 2, got.Attempts)
				require.Equal(t, []string{"2"}, h.lines("ran"))
				require.Len(t, got.Errors, 1)
				require.Contains(t, got.Errors[0], "attempt 1 did not run")
			}
			require.NoFileExists(t, filepath.Join(dir, shim.SpecFile))
			if !c.noDir {
				require.FileExists(t, filepath.Join(dir, shim.SpecFile+".withdrawn"))
			}
		})
	}
}

func TestReattachAfterRestart(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	task := h.create(h.spec("sleep 1; echo x >> ran; echo done"))
	dir := runner.LogDir(h.dir, task.ID, 1)
	polltest.Until(t, "the child to start", func() bool { return childStarted(dir) })
	h.restart()

	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
	require.Equal(t, 1, got.Attempts)
	require.Equal(t, "done", got.Result.Summary)
	require.Equal(t, []string{"x"}, h.lines("ran"))
}

// A reattached task's end is settled when its shim exits (a pidfd, a
// kqueue), not at the next poll: with a poll of an hour the test would
// time out.
func TestReattachedEndNeedsNoPoll(t *testing.T) {
	t.Parallel()
	h := startHome(t, func(c *runner.Config) { c.Poll = time.Hour })
	task := h.create(h.spec("while [ ! -e go ]; do sleep 0.01; done; echo done"))
	dir := runner.LogDir(h.dir, task.ID, 1)
	polltest.Until(t, "the child to start", func() bool { return childStarted(dir) })
	h.restart()

	require.NoError(t, os.WriteFile(h.path("go"), nil, 0o600))
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
	require.Equal(t, "done", got.Result.Summary)
}

func TestCancelAfterRestart(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	task := h.create(h.spec("sleep 30"))
	dir := runner.LogDir(h.dir, task.ID, 1)
	polltest.Until(t, "the child to start", func() bool { return childStarted(dir) })
	h.restart()

	_, err := h.eng().CancelTask(task.ID)
	require.NoError(t, err)
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskCancelled, got.Status)
	require.Equal(t, "cancelled", got.Reason)
	requireGroupGone(t, h, task.ID, 1)
}

// A shim that died while no gateway watched leaves its child running: the
// next runner stops the child and marks the task lost.
func TestRecoverDeadShimStopsOrphan(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	task := h.create(h.spec("sleep 30"))
	dir := runner.LogDir(h.dir, task.ID, 1)
	polltest.Until(t, "the child to start", func() bool { return childStarted(dir) })
	h.close()
	s := shimOf(t, dir)
	require.NoError(t, shim.Signal(s, syscall.SIGKILL))
	polltest.Until(t, "the shim to die", func() bool { return !shim.Alive(s) })
	child := childOf(t, dir)
	require.True(t, shim.Alive(child))
	h.open()
	h.start()

	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskLost, got.Status)
	require.Equal(t, "lost", got.Reason)
	require.Len(t, got.Errors, 1)
	require.Contains(t, got.Errors[0], "exited without recording")
	polltest.Until(t, "the orphaned child to be killed", func() bool { return !shim.Alive(child) })
}

// Reconcile settles what ended while no gateway watched, and leaves live
// tasks and the queue to the next gateway.
func TestReconcile(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	live := h.create(h.spec("sleep 30"))
	liveDir := runner.LogDir(h.dir, live.ID, 1)
	polltest.Until(t, "the child to start", func() bool { return childStarted(liveDir) })
	h.close()
	h.open()

	ended, dir := h.createRunning(h.spec("echo ended >> ran"))
	writeJSON(t, dir, shim.InfoFile, impostor(t, os.Getpid()))
	writeJSON(t, dir, shim.StatusFile, shim.Status{ExitCode: 0, StartedAt: time.Now(), EndedAt: time.Now()})
	dead, dir := h.createRunning(h.spec("echo dead >> ran"))
	writeJSON(t, dir, shim.InfoFile, impostor(t, os.Getpid()))
	unclaimed, _ := h.createRunning(h.spec("echo unclaimed >> ran"))

	require.NoError(t, runner.Reconcile(context.Background(), h.eng(), h.dir))
	for _, c := range []struct {
		id       string
		status   sdk.TaskStatus
		attempts int
	}{
		{live.ID, sdk.TaskRunning, 1},
		{ended.ID, sdk.TaskSucceeded, 1},
		{dead.ID, sdk.TaskLost, 1},
		{unclaimed.ID, sdk.TaskQueued, 1},
	} {
		got, err := h.eng().GetTask(c.id)
		require.NoError(t, err)
		require.Equal(t, c.status, got.Status, "errors: %q", got.Errors)
		require.Equal(t, c.attempts, got.Attempts)
	}
	require.Empty(t, h.lines("ran"), "Reconcile ran a command")
	require.True(t, shim.Alive(shimOf(t, liveDir)), "Reconcile stopped a live task")

	h.start()
	got := h.wait(unclaimed.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status)
	require.Equal(t, 2, got.Attempts)
	_, err := h.eng().CancelTask(live.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskCancelled, h.wait(live.ID).Status)
	require.Equal(t, []string{"unclaimed"}, h.lines("ran"))
}

// A cancel asked for while no gateway runs reaches the shim through
// Reconcile (what every command does when it opens the store), and a later
// Reconcile settles the task as cancelled, without a gateway.
func TestReconcileDeliversACancel(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	task := h.create(h.spec("sleep 30"))
	dir := runner.LogDir(h.dir, task.ID, 1)
	polltest.Until(t, "the child to start", func() bool { return childStarted(dir) })
	h.close()
	h.open()

	_, err := h.eng().CancelTask(task.ID)
	require.NoError(t, err)
	polltest.Until(t, "Reconcile to settle the cancel", func() bool {
		require.NoError(t, runner.Reconcile(context.Background(), h.eng(), h.dir))
		got, err := h.eng().GetTask(task.ID)
		require.NoError(t, err)
		return got.Status == sdk.TaskCancelled
	})
	requireGroupGone(t, h, task.ID, 1)
}
