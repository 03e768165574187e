package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// TestInProcessGatewayReadsTheHomeConfig: with no gateway running, tasks
// run hosts one that reads $FLOWGATE_HOME/gateway.yaml as the daemon
// does, so a failure that needs a diagnosis gets the configured
// diagnoser's advice (a revise, stored and never executed) instead of the
// task's blind retries.
func TestInProcessGatewayReadsTheHomeConfig(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	require.NoError(t, os.WriteFile(filepath.Join(home, "gateway.yaml"), []byte(`diagnoser:
  command: echo '{"evidence":"the input file is empty","recommendation":"revise"}'
  timeout: 10s
`), 0o600))
	code, stdout, errOut := run(t, home, "tasks", "run", "--retries", "2", "--retry-backoff", "10ms", "--", "sh", "-c", "echo odd >&2; exit 1")
	require.NotEqual(t, 0, code, stdout+errOut)

	code, stdout, errOut = run(t, home, "tasks", "list", "--json")
	require.Equal(t, 0, code, errOut)
	var l struct{ Tasks []apitype.Task }
	require.NoError(t, json.Unmarshal([]byte(stdout), &l), stdout)
	require.Len(t, l.Tasks, 1)
	task := l.Tasks[0]
	require.Equal(t, sdk.FailureNeedsDiagnosis, task.Class)
	require.Equal(t, 1, task.Attempts, "a revise is never executed, nor is a blind retry")
	require.NotNil(t, task.Diagnosis, "the home config's diagnoser was asked")
	require.Equal(t, sdk.RecommendRevise, task.Diagnosis.Recommendation)
}

// TestBadHomeConfigStopsTheCommand: a gateway.yaml that does not parse
// stops a command that would host a gateway, naming the file, rather than
// running work without the config the daemon would refuse to start with.
func TestBadHomeConfigStopsTheCommand(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	file := filepath.Join(home, "gateway.yaml")
	require.NoError(t, os.WriteFile(file, []byte("limits:\n  max_runing: 2\n"), 0o600))
	code, stdout, errOut := run(t, home, "tasks", "run", "--", "true")
	require.NotEqual(t, 0, code, stdout+errOut)
	require.Contains(t, errOut, file)
	require.Contains(t, errOut, "max_runing")
}
