package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/sdk"
)

// detachedBudget runs `tasks run --detach` with flags on home and returns
// the recorded task's max budget.
func detachedBudget(t *testing.T, home string, flags ...string) time.Duration {
	t.Helper()
	argv := append([]string{"tasks", "run", "--detach", "--json"}, flags...)
	code, stdout, errOut := run(t, home, append(argv, "--", "true")...)
	require.Equal(t, 0, code, errOut)
	var task apitype.Task
	require.NoError(t, json.Unmarshal([]byte(stdout), &task), stdout)
	return time.Duration(task.Spec.MaxBudget)
}

// TestDetachedMaxBudgetComesFromTheGatewayConfig: a detached run that
// gives no --max-budget gets the running gateway's
// limits.detached_max_budget, and 24 h from the gateway tasks run hosts
// when none runs; --max-budget still wins, 0 included.
func TestDetachedMaxBudgetComesFromTheGatewayConfig(t *testing.T) {
	t.Parallel()
	require.Equal(t, 24*time.Hour, detachedBudget(t, shortHome(t)), "no gateway running: the default")

	home := shortHome(t)
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("limits:\n  detached_max_budget: 2h\n"), 0o600))
	fc, err := gateway.LoadConfig(cfg)
	require.NoError(t, err)
	serveGateway(t, gateway.Config{Home: home, Owner: "cli test gateway", File: fc})

	require.Equal(t, 2*time.Hour, detachedBudget(t, home), "the gateway's configured default")
	require.Equal(t, 5*time.Minute, detachedBudget(t, home, "--max-budget", "5m"))
	require.Equal(t, time.Duration(0), detachedBudget(t, home, "--max-budget", "0"), "0 is none")
}

// detachedTask runs `tasks run --detach --shell` with flags on home and
// returns the recorded task.
func detachedTask(t *testing.T, home, line string, flags ...string) apitype.Task {
	t.Helper()
	argv := append([]string{"tasks", "run", "--detach", "--json", "--shell"}, flags...)
	code, stdout, errOut := run(t, home, append(argv, "--", line)...)
	require.Equal(t, 0, code, errOut)
	var task apitype.Task
	require.NoError(t, json.Unmarshal([]byte(stdout), &task), stdout)
	return task
}

// endedTask waits for task id on home to end and returns it.
func endedTask(t *testing.T, home, id string) apitype.Task {
	t.Helper()
	var task apitype.Task
	require.Eventually(t, func() bool {
		code, stdout, _ := run(t, home, "tasks", "show", "--json", id)
		return code == 0 && json.Unmarshal([]byte(stdout), &task) == nil && !task.Status.Active()
	}, 60*time.Second, 50*time.Millisecond, "task %s never ended", id)
	return task
}

// TestDetachedNoProgressBudgetComesFromTheGatewayConfig: a detached run
// that reported progress once and then went quiet is stopped by the
// gateway's limits.detached_no_progress_budget (shortened to 2s here); one
// that never reports outlives it, and --no-progress-budget 0 turns it off.
// tasks show names the budget the run got.
func TestDetachedNoProgressBudgetComesFromTheGatewayConfig(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("limits:\n  detached_no_progress_budget: 2s\n"), 0o600))
	fc, err := gateway.LoadConfig(cfg)
	require.NoError(t, err)
	serveGateway(t, gateway.Config{Home: home, Owner: "cli test gateway", File: fc})

	const reportThenQuiet = `printf '{"fraction":0.1}\n' >> "$FLOWGATE_PROGRESS"; sleep 30`
	quiet := detachedTask(t, home, reportThenQuiet)
	require.Equal(t, sdk.Duration(2*time.Second), quiet.Spec.NoProgressBudget, "the gateway's configured default")
	_, show, _ := run(t, home, "tasks", "show", quiet.ID)
	require.Contains(t, show, "noProgressBudget:")
	require.Contains(t, show, "2s (armed by the first progress report)")
	ended := endedTask(t, home, quiet.ID)
	require.Equal(t, sdk.TaskTimedOut, ended.Status)
	require.Equal(t, "no-progress", ended.Reason)

	// Silent from the start: the budget is never armed, so a run twice
	// as long as it succeeds.
	silent := detachedTask(t, home, "sleep 4")
	require.Equal(t, sdk.TaskSucceeded, endedTask(t, home, silent.ID).Status, "a run that never reports is not bound by the no-progress budget")

	off := detachedTask(t, home, `printf '{"fraction":0.1}\n' >> "$FLOWGATE_PROGRESS"; sleep 4`, "--no-progress-budget", "0")
	require.Zero(t, off.Spec.NoProgressBudget, "0 is none")
	require.Equal(t, sdk.TaskSucceeded, endedTask(t, home, off.ID).Status)

	require.Equal(t, sdk.Duration(time.Hour), detachedTask(t, shortHome(t), "true").Spec.NoProgressBudget, "no gateway running: the default, 1h")
}
