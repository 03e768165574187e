package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// TestProgressFileSabotage runs tasks that turn their progress file (or
// output) into a named pipe or a link to /dev/zero through the real
// binary: tasks run ends with the task's exit code, a running one is cancelled, and a
// gateway started again after a SIGKILL settles one that ended meanwhile.
func TestProgressFileSabotage(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, _, logf := e2eDirs(t)
	const fifo = `rm -f "$FLOWGATE_PROGRESS"; mkfifo "$FLOWGATE_PROGRESS"; `

	// No gateway runs: tasks run hosts one for its own duration.
	for line, code := range map[string]int{
		fifo + "exit 3": 3,
		`ln -sf /dev/zero "$FLOWGATE_PROGRESS"; exit 0`:                                    0,
		`d=$(dirname "$FLOWGATE_PROGRESS"); rm -f "$d/stdout"; mkfifo "$d/stdout"; exit 4`: 4,
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, bin, "--home", home, "tasks", "run", "--", "sh", "-c", line).CombinedOutput()
		require.NoError(t, ctx.Err(), "tasks run of %q did not end: %s", line, out)
		cancel()
		got := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			got = ee.ExitCode()
		} else {
			require.NoError(t, err, "%s", out)
		}
		require.Equal(t, code, got, "tasks run of %q: %s", line, out)
	}

	g := startGateway(t, bin, home, logf)
	t.Cleanup(g.reap)
	detach := func(line string) string {
		var task stored.Task
		out := flowgate(t, bin, "--home", home, "tasks", "run", "--detach", "--json", "--", "sh", "-c", line)
		require.NoError(t, json.Unmarshal([]byte(out), &task), out)
		progress := filepath.Join(runner.TaskDir(home, task.ID), runner.ProgressFile)
		polltest.Until(t, "the progress file of "+task.ID+" to be a named pipe", func() bool {
			fi, err := os.Lstat(progress)
			return err == nil && fi.Mode()&os.ModeNamedPipe != 0
		}, polltest.Within(20*time.Second), polltest.Every(50*time.Millisecond))
		return task.ID
	}
	settled := func(id string) stored.Task {
		var task stored.Task
		polltest.Until(t, "", func() (bool, string) {
			out := flowgate(t, bin, "--home", home, "tasks", "show", id, "--json")
			require.NoError(t, json.Unmarshal([]byte(out), &task), out)
			return task.Status.Terminal(), "task " + id + " not settled: " + out
		}, polltest.Within(20*time.Second), polltest.Every(50*time.Millisecond))
		return task
	}

	id := detach(fifo + "sleep 60")
	flowgate(t, bin, "--home", home, "tasks", "cancel", id)
	require.Equal(t, sdk.TaskCancelled, settled(id).Status)

	release := filepath.Join(home, "release")
	id = detach(fifo + `while [ ! -e "` + release + `" ]; do sleep 0.05; done; exit 5`)
	g.kill(t)
	require.NoError(t, os.WriteFile(release, nil, 0o600))
	g = startGateway(t, bin, home, logf)
	t.Cleanup(g.reap)
	task := settled(id)
	require.Equal(t, sdk.TaskFailed, task.Status)
	require.NotNil(t, task.ExitCode)
	require.Equal(t, 5, *task.ExitCode)
	require.Contains(t, task.Errors[len(task.Errors)-1], "progress not read")
	g.stop(t)
}
