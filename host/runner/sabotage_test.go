package runner_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/sdk"
)

// A task can replace the files of its directory that the gateway reads
// (its progress file, its output) with a named pipe or a link to an
// endless device. Its end is still recorded, with its exit code and a
// note of what was not read, instead of the runner waiting for ever.
func TestTaskFilesReplaced(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, line string
		status     sdk.TaskStatus
		code       int
		// note is what the task's last error says, of file in its
		// directory.
		note, file string
	}{
		{"progress fifo", `rm -f "$FLOWGATE_PROGRESS"; mkfifo "$FLOWGATE_PROGRESS"`,
			sdk.TaskSucceeded, 0, "progress not read: %s is a named pipe (FIFO), not a regular file", runner.ProgressFile},
		{"progress link to /dev/zero", `ln -sf /dev/zero "$FLOWGATE_PROGRESS"; exit 3`,
			sdk.TaskFailed, 3, "progress not read: %s is a symbolic link, not a regular file", runner.ProgressFile},
		{"stdout fifo", `d=$(dirname "$FLOWGATE_PROGRESS"); rm -f "$d/stdout"; mkfifo "$d/stdout"; exit 4`,
			sdk.TaskFailed, 4, "output not read: %s is a named pipe (FIFO), not a regular file", "stdout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startHome(t, nil)
			task := h.create(h.spec(tc.line))
			got := h.wait(task.ID)
			require.Equal(t, tc.status, got.Status, "errors: %q", got.Errors)
			require.NotNil(t, got.ExitCode)
			require.Equal(t, tc.code, *got.ExitCode)
			require.NotEmpty(t, got.Errors)
			file := filepath.Join(runner.TaskDir(h.dir, task.ID), tc.file)
			require.Contains(t, got.Errors[len(got.Errors)-1], fmt.Sprintf(tc.note, file))
		})
	}
}

// A task whose progress file is a named pipe can still be cancelled
// while it runs.
func TestCancelTaskWithProgressFifo(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	task := h.create(h.spec(`rm -f "$FLOWGATE_PROGRESS"; mkfifo "$FLOWGATE_PROGRESS"; sleep 30`))
	progress := filepath.Join(runner.TaskDir(h.dir, task.ID), runner.ProgressFile)
	polltest.Until(t, "the progress file to be a named pipe", func() bool {
		fi, err := os.Lstat(progress)
		return err == nil && fi.Mode()&os.ModeNamedPipe != 0
	})
	_, err := h.eng().CancelTask(task.ID)
	require.NoError(t, err)
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskCancelled, got.Status)
	require.Contains(t, got.Errors[len(got.Errors)-1], "progress not read")
}

// A gateway that starts again on a task whose progress file is a named
// pipe settles the task once it ends.
func TestRestartOnProgressFifo(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	task := h.create(h.spec(`rm -f "$FLOWGATE_PROGRESS"; mkfifo "$FLOWGATE_PROGRESS"; while [ ! -e release ]; do sleep 0.02; done; exit 5`))
	dir := runner.LogDir(h.dir, task.ID, 1)
	progress := filepath.Join(dir, runner.ProgressFile)
	polltest.Until(t, "the progress file to be a named pipe", func() bool {
		fi, err := os.Lstat(progress)
		return err == nil && fi.Mode()&os.ModeNamedPipe != 0
	})
	h.close()
	require.NoError(t, os.WriteFile(h.path("release"), nil, 0o600))
	polltest.Until(t, "the attempt to end", func() bool { return attemptEnded(dir) })
	h.open()
	h.start()
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskFailed, got.Status)
	require.NotNil(t, got.ExitCode)
	require.Equal(t, 5, *got.ExitCode)
	require.Contains(t, got.Errors[len(got.Errors)-1], "progress not read")
}

// An attempt cannot leave a named pipe where the next attempt's input
// goes: the next attempt fails to start, saying why, instead of its
// launch waiting for ever for a reader.
func TestNextAttemptStdinReplaced(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	spec := h.spec(`d=$(dirname "$FLOWGATE_PROGRESS"); if [ ! -e "$d/2" ]; then mkdir "$d/2" && mkfifo "$d/2/stdin"; exit 75; fi; cat`)
	spec.Input = "input"
	spec.Retry = &sdk.RetryPolicy{MaxAttempts: 2, Backoff: sdk.Duration(time.Millisecond)}
	task := h.create(spec)
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskFailed, got.Status)
	require.Equal(t, 2, got.Attempts)
	require.Equal(t, "start-failed", got.Reason)
	require.Contains(t, got.Errors[len(got.Errors)-1], filepath.Join(runner.LogDir(h.dir, task.ID, 2), "stdin"))
}
