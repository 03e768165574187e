package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
	var task sdk.Task
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
