package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// daemon is a gateway run as its own process, as `flowgate gateway` runs.
type daemon struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// startDaemon starts a gateway process on home, logging to log, with
// env (NAME=value) added to the test's environment, and waits until it
// answers; the test's end kills it.
func startDaemon(t *testing.T, home, log string, env ...string) *daemon {
	t.Helper()
	d := &daemon{cmd: exec.Command(os.Args[0], "gateway", "--home", home), exited: make(chan struct{})}
	if len(env) > 0 {
		d.cmd.Env = append(os.Environ(), env...)
	}
	f, err := os.OpenFile(log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	defer f.Close()
	d.cmd.Stdout, d.cmd.Stderr = f, f
	require.NoError(t, d.cmd.Start())
	go func() {
		_ = d.cmd.Wait()
		close(d.exited)
	}()
	t.Cleanup(d.kill)
	require.Eventually(t, func() bool {
		code, stdout, _ := run(t, home, "gateway", "status", "--json")
		return code == 0 && strings.Contains(stdout, `"running": true`)
	}, 20*time.Second, 50*time.Millisecond, "the gateway process did not come up")
	return d
}

// kill SIGKILLs the gateway and waits for it to be gone.
func (d *daemon) kill() {
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.exited
}

// TestDetachedGiveUpThenLateFinishNotifiesTwice: a detached run given up
// at its no-progress budget (its child kept running) notifies
// "interrupted"; the gateway is SIGKILLed; the child then finishes while
// no gateway runs, and the next gateway notifies "succeeded". Each is
// delivered once.
func TestDetachedGiveUpThenLateFinishNotifiesTwice(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	dir := t.TempDir()
	notices, gate, log := filepath.Join(dir, "notices"), filepath.Join(dir, "go"), filepath.Join(dir, "gateway.log")
	gw := startDaemon(t, home, log)

	child := `echo '{"fraction":0.1}' >> "$FLOWGATE_PROGRESS"; while [ ! -f ` + gate + ` ]; do sleep 0.05; done; echo finished`
	code, stdout, errOut := run(t, home, "tasks", "run", "--detach", "--json", "--no-progress-budget", "300ms", "--on-no-progress", "keep",
		"--on-finish", `echo "$FLOWGATE_NOTICE_KEY $FLOWGATE_TASK_STATUS" >> `+notices, "--", "sh", "-c", child)
	require.Equal(t, 0, code, errOut)
	var task apitype.Task
	require.NoError(t, json.Unmarshal([]byte(stdout), &task), stdout)
	require.Equal(t, sdk.Duration(24*time.Hour), task.Spec.MaxBudget, "a detached run's default max budget")

	lines := func() []string { return fileLines(notices) }
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "finish notice delivered")
	}, 20*time.Second, 20*time.Millisecond, "the interrupted notice was not delivered")
	require.Equal(t, []string{task.ID + "/interrupted interrupted"}, lines())
	code, stdout, _ = run(t, home, "tasks", "show", task.ID)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "child still running")
	require.Contains(t, stdout, "running")

	gw.kill()
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	startDaemon(t, home, log)
	require.Eventually(t, func() bool { return len(lines()) >= 2 }, 20*time.Second, 20*time.Millisecond, "the late finish was not notified")
	require.Equal(t, []string{task.ID + "/interrupted interrupted", task.ID + "/succeeded succeeded"}, lines())
	code, stdout, _ = run(t, home, "tasks", "show", task.ID, "--json")
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(stdout), &task), stdout)
	require.Equal(t, sdk.TaskSucceeded, task.Status)
	require.False(t, task.Interrupted.ChildStillRunning, "its child ended")
}

// TestFollowEndsAtAGiveUp: tasks run stops waiting when the task is given
// up on with its child kept running, exits 124 and says the end is still
// recorded; the child's late finish is.
func TestFollowEndsAtAGiveUp(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	gate := filepath.Join(t.TempDir(), "go")
	child := `echo '{"fraction":0.1}' >> "$FLOWGATE_PROGRESS"; while [ ! -f ` + gate + ` ]; do sleep 0.05; done`
	code, _, errOut := run(t, home, "tasks", "run", "--label", "kept", "--no-progress-budget", "200ms", "--on-no-progress", "keep", "--", "sh", "-c", child)
	require.Equal(t, 124, code, errOut)
	require.Contains(t, errOut, "interrupted (no-progress): its command keeps running")

	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	require.Eventually(t, func() bool {
		_, stdout, _ := run(t, home, "tasks", "list")
		return strings.Contains(stdout, "succeeded")
	}, 20*time.Second, 50*time.Millisecond, "the late finish was not recorded")
}
