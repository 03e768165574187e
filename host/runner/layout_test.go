package runner_test

import (
	"os"
	"path/filepath"
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

// entries lists the names in dir, a trailing slash marking a directory.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	list, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range list {
		name := e.Name()
		if e.IsDir() {
			name += "/"
		}
		names = append(names, name)
	}
	return names
}

// readAttempt returns the file name of attempt n of task id, as the CLI
// and the run center find it.
func readAttempt(t *testing.T, h *home, id string, n int, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(runner.LogDir(h.dir, id, n), name))
	require.NoError(t, err)
	return string(b)
}

// A task's first attempt makes one directory, the task's own, and in it
// only the record and the output files: no progress file when the task
// reports none. A retry makes one directory more, inside it.
func TestTaskMakesOneDirectory(t *testing.T) {
	t.Parallel()
	h := retryHome(t)
	task := h.create(h.spec("echo out; echo err >&2"))
	require.Equal(t, sdk.TaskSucceeded, h.wait(task.ID).Status)
	require.Equal(t, []string{task.ID + "/"}, entries(t, h.path("logs")))
	taskDir := runner.TaskDir(h.dir, task.ID)
	require.Equal(t, []string{shim.RecordFile, shim.StderrFile, shim.StdoutFile}, entries(t, taskDir))
	require.Equal(t, taskDir, runner.LogDir(h.dir, task.ID, 1))
	require.Equal(t, "out\n", readAttempt(t, h, task.ID, 1, shim.StdoutFile))
	require.Equal(t, "err\n", readAttempt(t, h, task.ID, 1, shim.StderrFile))

	spec := h.spec(`echo "try $FLOWGATE_ATTEMPT"; if [ "$FLOWGATE_ATTEMPT" = 1 ]; then echo 'try later' >&2; exit 75; fi`)
	spec.Retry = &sdk.RetryPolicy{MaxAttempts: 2, Backoff: sdk.Duration(10 * time.Millisecond)}
	retried := h.create(spec)
	got := h.wait(retried.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
	require.Equal(t, 2, got.Attempts)
	taskDir = runner.TaskDir(h.dir, retried.ID)
	require.Equal(t, []string{"2/", shim.RecordFile, shim.StderrFile, shim.StdoutFile}, entries(t, taskDir))
	require.Equal(t, filepath.Join(taskDir, "2"), runner.LogDir(h.dir, retried.ID, 2))
	require.Equal(t, []string{shim.RecordFile, shim.StderrFile, shim.StdoutFile}, entries(t, filepath.Join(taskDir, "2")))
	require.Equal(t, "try 1\n", readAttempt(t, h, retried.ID, 1, shim.StdoutFile))
	require.Equal(t, "try 2\n", readAttempt(t, h, retried.ID, 2, shim.StdoutFile))
}

// A task that reports progress creates its progress file in its task
// directory, shared by its attempts, and the runner reads it from there.
func TestProgressFileIsTheTasks(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	task := h.create(h.spec(`echo '{"phase":"half"}' >> "$FLOWGATE_PROGRESS"`))
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
	require.NotNil(t, got.Progress)
	require.Equal(t, "half", got.Progress.Phase)
	require.FileExists(t, filepath.Join(runner.TaskDir(h.dir, task.ID), runner.ProgressFile))
}

// A gateway from before the one-directory layout started every attempt
// in logs/<task>/<n>, the first one too. After an upgrade, such an
// attempt whose shim still runs is found, reattached, settled and read.
func TestOlderLayoutIsReattached(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil)
	task, _, err := h.eng().CreateTask(engine.CreateTaskInput{OwnerKey: "t", Status: sdk.TaskRunning,
		Spec: h.spec("while [ ! -e go ]; do sleep 0.01; done; echo done")})
	require.NoError(t, err)
	taskDir := runner.TaskDir(h.dir, task.ID)
	dir := filepath.Join(taskDir, "1")
	startFirstAttempt(t, h, task, dir)
	polltest.Until(t, "the child to start", func() bool { return childStarted(dir) })

	require.Equal(t, dir, runner.LogDir(h.dir, task.ID, 1))
	require.Equal(t, runner.AttemptAlive, runner.AttemptState(h.dir, task))
	require.True(t, runner.Launched(h.dir, task))
	h.start()
	require.NoError(t, os.WriteFile(h.path("go"), nil, 0o600))
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
	require.Equal(t, 1, got.Attempts)
	require.Equal(t, "done", got.Result.Summary)
	require.Equal(t, "done\n", readAttempt(t, h, task.ID, 1, shim.StdoutFile))
	require.Equal(t, []string{"1/"}, entries(t, taskDir), "the upgraded gateway made nothing beside the older attempt")
}

// A directory named 1 that a task makes in its own directory is the
// task's, not an attempt of the older layout: after a restart the
// gateway still finds the running first attempt in the task's directory,
// reattaches it and does not run the task again.
func TestTasksOwnDirectoryNamedOneIsNoAttempt(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil)
	task, _, err := h.eng().CreateTask(engine.CreateTaskInput{OwnerKey: "t", Status: sdk.TaskRunning,
		Spec: h.spec("mkdir \"$(dirname \"$FLOWGATE_PROGRESS\")/1\"; while [ ! -e go ]; do sleep 0.01; done; echo done")})
	require.NoError(t, err)
	taskDir := runner.TaskDir(h.dir, task.ID)
	startFirstAttempt(t, h, task, taskDir)
	polltest.Until(t, "the child to make its directory", func() bool {
		fi, err := os.Stat(filepath.Join(taskDir, "1"))
		return err == nil && fi.IsDir()
	})

	require.Equal(t, taskDir, runner.LogDir(h.dir, task.ID, 1))
	require.Equal(t, runner.AttemptAlive, runner.AttemptState(h.dir, task))
	h.start()
	require.NoError(t, os.WriteFile(h.path("go"), nil, 0o600))
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
	require.Equal(t, 1, got.Attempts, "the task ran once")
}

// startFirstAttempt starts a shim of task's first attempt in dir, as a
// gateway does (its progress file in the task's directory), without a
// runner: the test's gateway starts later and must find it.
func startFirstAttempt(t *testing.T, h *home, task *stored.Task, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, shim.Prepare(dir))
	entry, err := shim.SpecEntry(shim.Spec{TaskID: task.ID, FlowID: task.FlowID, Attempt: 1,
		Shell: task.Spec.Shell, Cwd: h.dir, ProgressPath: filepath.Join(runner.TaskDir(h.dir, task.ID), runner.ProgressFile)})
	require.NoError(t, err)
	p, err := launchShim(dir, append(os.Environ(), entry))
	require.NoError(t, err)
	go func() { _, _ = p.Wait() }()
}
