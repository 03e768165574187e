package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/cli"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

func TestTasksRunFollowsAndExitsWithTheTaskCode(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, out, errOut := run(t, home, "tasks", "run", "--label", "greet", "--env", "WHO=world", "--", "sh", "-c", `echo "hello $WHO"; echo warn >&2; exit 4`)
	require.Equal(t, 4, code, errOut)
	require.Equal(t, "hello world\n", out)
	require.Contains(t, errOut, "warn\n")
	require.Contains(t, errOut, "exit code 4")

	code, out, _ = run(t, home, "tasks", "list", "--json")
	require.Equal(t, 0, code)
	var l struct{ Tasks []apitype.Task }
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Len(t, l.Tasks, 1)
	task := l.Tasks[0]
	require.Equal(t, sdk.TaskFailed, task.Status)
	require.Equal(t, "greet", task.Label)

	code, out, _ = run(t, home, "tasks", "logs", task.ID)
	require.Equal(t, 0, code)
	require.Equal(t, "hello world\n", out)
	code, out, _ = run(t, home, "tasks", "logs", "--stderr", task.ID)
	require.Equal(t, 0, code)
	require.Equal(t, "warn\n", out)
	code, out, _ = run(t, home, "tasks", "logs", "-f", task.ID)
	require.Equal(t, 0, code, "following a finished task ends at once")
	require.Equal(t, "hello world\n", out)
}

func TestTasksRunStdinIdempotencyAndMissingCommand(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	var out, errb bytes.Buffer
	code := cli.MainIO([]string{"--home", home, "tasks", "run", "--stdin", "-", "--idempotency-key", "once", "--", "tr", "a-z", "A-Z"},
		strings.NewReader("shout\n"), &out, &errb)
	require.Equal(t, 0, code, errb.String())
	require.Equal(t, "SHOUT\n", out.String())

	code, stdout, errOut := run(t, home, "tasks", "run", "--idempotency-key", "once", "--", "sh", "-c", "echo ran again")
	require.Equal(t, 0, code)
	require.Contains(t, errOut, "already exists")
	require.NotContains(t, stdout, "ran again")

	code, _, errOut = run(t, home, "tasks", "run", "--", "no-such-command-xyz")
	require.Equal(t, 127, code)
	require.Contains(t, errOut, "no-such-command-xyz")

	code, _, _ = run(t, home, "tasks", "run", "--", "true")
	require.Equal(t, 0, code, "the gateway is unaffected by a failed start")
}

func TestTasksRunBadInput(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	for name, c := range map[string]struct {
		args []string
		says string
	}{
		"no command":       {[]string{"tasks", "run"}, "needs a command"},
		"bad env":          {[]string{"tasks", "run", "--env", "NOEQUALS", "--", "true"}, `"NOEQUALS"`},
		"missing cwd":      {[]string{"tasks", "run", "--cwd", "/no/such/dir", "--", "true"}, "/no/such/dir"},
		"missing stdin":    {[]string{"tasks", "run", "--stdin", "/no/such/file", "--", "true"}, "/no/such/file"},
		"negative retries": {[]string{"tasks", "run", "--retries", "-1", "--", "true"}, "--retries"},
		"bad timeout":      {[]string{"tasks", "run", "--timeout", "soon", "--", "true"}, `"soon"`},
		"bad probe":        {[]string{"tasks", "run", "--agent", "--probe", "nocolon", "--", "true"}, "host:port"},
	} {
		code, out, errOut := run(t, home, c.args...)
		require.Equal(t, 2, code, "%s: %s", name, errOut)
		require.Contains(t, errOut, c.says, name)
		require.Empty(t, out, name)
	}
	code, out, _ := run(t, home, "tasks", "list", "--json")
	require.Equal(t, 0, code)
	require.Contains(t, out, `"count": 0`, "no refused run wrote a task")
}

// TestTasksRunAgent: --agent makes an agent task with the agent retry
// defaults, and --probe names its network probe.
func TestTasksRunAgent(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, out, errOut := run(t, home, "tasks", "run", "--agent", "--probe", "localhost:443", "--detach", "--json", "--", "true")
	require.Equal(t, 0, code, errOut)
	var task apitype.Task
	require.NoError(t, json.Unmarshal([]byte(out), &task), out)
	require.Equal(t, sdk.RuntimeAgent, task.Runtime)
	require.Equal(t, "localhost:443", task.Spec.Probe)
	require.Equal(t, sdk.AgentRetryPolicy(), task.Spec.Retry)
}

func TestGatewayStatusAndConfig(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, out, _ := run(t, home, "gateway", "status")
	require.Equal(t, 1, code)
	require.Contains(t, out, "No gateway is running for "+home)

	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("limits:\n  max_runing: 3\n"), 0o600))
	code, _, errOut := run(t, home, "gateway", "--config", cfg)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "max_runing")

	require.NoError(t, os.WriteFile(cfg, []byte("retention:\n  tasks: forever\n"), 0o600))
	code, _, errOut = run(t, home, "gateway", "--config", cfg)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `"forever"`)

	require.NoError(t, os.WriteFile(cfg, []byte("limits:\n  max_running: -2\n"), 0o600))
	code, _, errOut = run(t, home, "gateway", "--config", cfg)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "limits.max_running")
}

// shortHome returns a home whose socket path fits the unix limit.
func shortHome(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fgcli")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestPluginsListWithoutGateway(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, out, errOut := run(t, home, "plugins", "list", "--json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "No gateway is running")
	require.JSONEq(t, `{"count":0,"plugins":[]}`, out)

	code, _, errOut = run(t, home, "plugin", "serve", "nope")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `no first-party plugin is named "nope"`)
}

// A child killed by a signal makes `tasks run` exit 128+signal, as a
// shell does, and the task records the signal.
func TestTasksRunKilledBySignalExits128PlusSignal(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, _, errOut := run(t, home, "tasks", "run", "--", "sh", "-c", `kill -KILL $$`)
	require.Equal(t, 128+9, code, errOut)
	require.Contains(t, errOut, "killed by SIGKILL")

	code, out, _ := run(t, home, "tasks", "list", "--json")
	require.Equal(t, 0, code)
	var l struct{ Tasks []apitype.Task }
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Len(t, l.Tasks, 1)
	require.Equal(t, "SIGKILL", l.Tasks[0].Signal)
}

// A task that reports thousands of milestones and big progress lines
// still ends succeeded, with its final progress recorded.
func TestTasksRunFloodOfMilestonesEnds(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	script := `awk 'BEGIN {
		s = "m"; while (length(s) < 400) s = s s
		for (i = 1; i <= 3000; i++) printf "{\"milestone\":\"m%d\",\"message\":\"%s\"}\n", i, s
		p = "p"; while (length(p) < 40000) p = p p
		for (i = 0; i < 20; i++) printf "{\"fraction\":0.5,\"message\":\"%s\"}\n", p
		print "{\"fraction\":1.0,\"phase\":\"done\"}"
	}' >>"$FLOWGATE_PROGRESS"`
	code, _, errOut := run(t, home, "tasks", "run", "--", "sh", "-c", script)
	require.Equal(t, 0, code, errOut[max(0, len(errOut)-500):])

	code, out, _ := run(t, home, "tasks", "list", "--json")
	require.Equal(t, 0, code)
	var l struct{ Tasks []apitype.Task }
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Len(t, l.Tasks, 1)
	task := l.Tasks[0]
	require.Equal(t, sdk.TaskSucceeded, task.Status)
	require.NotNil(t, task.Progress)
	require.Equal(t, 1.0, *task.Progress.Fraction)
	require.Equal(t, "done", task.Progress.Phase)
	require.Equal(t, int64(3000), task.Milestones[len(task.Milestones)-1].Seq)
	require.Equal(t, int64(3000), int64(len(task.Milestones))+task.MilestonesDropped)
}
