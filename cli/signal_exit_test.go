package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// A task killed by a signal has exit code 128 plus its number, 137 for
// SIGKILL, in tasks run's own code, tasks show and its --json, with the
// signal named; and once its child ended no give-up says the child still
// runs.
func TestSignalDeathExitCode(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, _, errOut := run(t, home, "tasks", "run", "--", "sh", "-c", "kill -9 $$")
	require.Equal(t, 137, code, errOut)

	startDaemon(t, home, filepath.Join(t.TempDir(), "gateway.log"))
	gate := filepath.Join(t.TempDir(), "go")
	child := `echo '{"fraction":0.1}' >> "$FLOWGATE_PROGRESS"; while [ ! -f ` + gate + ` ]; do sleep 0.05; done; kill -9 $$`
	code, stdout, errOut := run(t, home, "tasks", "run", "--detach", "--json", "--no-progress-budget", "200ms", "--on-no-progress", "keep", "--", "sh", "-c", child)
	require.Equal(t, 0, code, errOut)
	var task apitype.Task
	require.NoError(t, json.Unmarshal([]byte(stdout), &task), stdout)
	require.Eventually(t, func() bool {
		_, stdout, _ := run(t, home, "tasks", "show", task.ID)
		return strings.Contains(stdout, "child still running")
	}, 20*time.Second, 20*time.Millisecond, "the task was not given up on")

	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	require.Eventually(t, func() bool {
		_, stdout, _ := run(t, home, "tasks", "show", task.ID, "--json")
		return json.Unmarshal([]byte(stdout), &task) == nil && task.Status.Terminal()
	}, 20*time.Second, 20*time.Millisecond, "the child's end was not recorded")
	require.Equal(t, sdk.TaskFailed, task.Status)
	require.NotNil(t, task.ExitCode)
	require.Equal(t, 137, *task.ExitCode)
	require.Equal(t, "SIGKILL", task.Signal)
	require.NotNil(t, task.Interrupted)
	require.False(t, task.Interrupted.ChildStillRunning)

	code, stdout, errOut = run(t, home, "tasks", "show", task.ID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `exitCode: +137 \(killed by SIGKILL\)`, stdout)
	require.NotContains(t, stdout, "still running")
}
