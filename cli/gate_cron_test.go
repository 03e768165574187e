package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/plugins"
	"github.com/flowgate/flowgate/sdk"
)

// startSweepingGateway runs a gateway on home, with the real pipeline plugin and a
// sweep every second, until the test ends.
func startSweepingGateway(t *testing.T, home string) {
	t.Helper()
	cfg := gateway.Config{Home: home, Owner: t.Name(), Builtins: plugins.Names()}
	cfg.File.Maintenance.First = gateway.Duration(100 * time.Millisecond)
	cfg.File.Maintenance.Interval = gateway.Duration(time.Second)
	g, err := gateway.New(cfg)
	require.NoError(t, err)
	require.NoError(t, g.Start(t.Context()))
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, g.Stop(sctx))
	})
}

// lastRun returns the newest run of job.
func lastRun(t *testing.T, home, job string) (status, errText, flowID string, waiting *struct{ Step string }) {
	t.Helper()
	code, out, errOut := run(t, home, "cron", "runs", job, "--json")
	require.Equal(t, 0, code, errOut)
	var rs struct {
		Runs []struct {
			Status  string
			Error   string
			FlowID  string `json:"flow_id"`
			Waiting *struct{ Step string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rs))
	require.NotEmpty(t, rs.Runs)
	r := rs.Runs[0]
	return r.Status, r.Error, r.FlowID, r.Waiting
}

// TestCronAddWarnsWhenAGateBlocksLaterRuns: a pipeline job with a gate
// under the default overlap policy gets a warning naming the gate and the
// ways out; with a gate timeout, or another policy, or no gate, none.
func TestCronAddWarnsWhenAGateBlocksLaterRuns(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	file, _ := gateFile(t)
	code, _, errOut := run(t, home, "cron", "add", "--name", "ship", "--every", "1h", "--pipeline", file)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "waits at a gate (step gate)")
	require.Contains(t, errOut, "--gate-timeout")
	require.Contains(t, errOut, "--overlap buffer_one")

	for i, extra := range [][]string{{"--gate-timeout", "1h"}, {"--overlap", "buffer_one"}} {
		code, _, errOut = run(t, home, append([]string{"cron", "add", "--name", "quiet" + string(rune('a'+i)), "--every", "1h", "--pipeline", file}, extra...)...)
		require.Equal(t, 0, code, errOut)
		require.Empty(t, errOut, extra)
	}
	code, out, _ := run(t, home, "cron", "show", "quieta")
	require.Equal(t, 0, code)
	require.Contains(t, out, "gateTimeout")
	code, _, errOut = run(t, home, "cron", "edit", "quietb", "--gate-timeout", "2h")
	require.Equal(t, 0, code, errOut)
	code, out, _ = run(t, home, "cron", "show", "quietb")
	require.Equal(t, 0, code)
	require.Contains(t, out, "2h0m0s")
	code, _, errOut = run(t, home, "cron", "edit", "quietb", "--gate-timeout", "10ms")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "1s or more")
	code, _, errOut = run(t, home, "cron", "add", "--name", "cmd", "--every", "1h", "--command", "true", "--gate-timeout", "1h")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--gate-timeout")
}

// TestCronRunsShowTheGateAndWhoDenied runs a gated pipeline job in a
// gateway: cron status and cron runs say where it waits, and after a
// denial cron runs says who denied it.
func TestCronRunsShowTheGateAndWhoDenied(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	file, _ := gateFile(t)
	startSweepingGateway(t, home)
	code, _, errOut := run(t, home, "cron", "add", "--name", "ship", "--every", "1h", "--pipeline", file)
	require.Equal(t, 0, code, errOut)
	code, _, errOut = run(t, home, "cron", "run", "ship")
	require.Equal(t, 0, code, errOut)

	require.Eventually(t, func() bool {
		_, _, _, w := lastRun(t, home, "ship")
		return w != nil
	}, 20*time.Second, 50*time.Millisecond, "the run parks at its gate")
	code, out, _ := run(t, home, "cron", "runs", "ship")
	require.Equal(t, 0, code)
	require.Contains(t, out, "waiting at gate gate since ")
	code, out, _ = run(t, home, "cron", "status")
	require.Equal(t, 0, code)
	require.Contains(t, out, "waiting at gate gate since ")

	_, _, flowID, _ := lastRun(t, home, "ship")
	code, _, errOut = run(t, home, "tasks", "flow", "deny", flowID, "--by", "bo")
	require.Equal(t, 0, code, errOut)
	require.Eventually(t, func() bool {
		status, _, _, _ := lastRun(t, home, "ship")
		return status == "cancelled"
	}, 20*time.Second, 50*time.Millisecond, "the denied run ends")
	_, errText, _, _ := lastRun(t, home, "ship")
	require.Equal(t, "denied by bo at gate gate", errText)
}

// TestGateTimeoutDeniesAnUnansweredGate parks a pipeline with
// --gate-timeout while no gateway runs: the deadline is stored with the
// gate, so the gateway started later denies it as gate-expired. A cron
// job's --gate-timeout does the same, and its run history says why.
func TestGateTimeoutDeniesAnUnansweredGate(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	file, out := gateFile(t)
	code, stdout, errOut := run(t, home, "pipeline", "run", file, "--gate-timeout", "1s", "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "needs_approval")
	var env struct{ FlowID string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &env))

	startSweepingGateway(t, home)
	flowState := func(id string) sdk.Flow {
		code, out, errOut := run(t, home, "tasks", "flow", "show", id, "--json")
		require.Equal(t, 0, code, errOut)
		var f sdk.Flow
		require.NoError(t, json.Unmarshal([]byte(out), &f))
		return f
	}
	require.Eventually(t, func() bool { return flowState(env.FlowID).Status == sdk.FlowCancelled }, 30*time.Second, 50*time.Millisecond,
		"the next gateway denies the gate whose deadline passed")
	require.Equal(t, sdk.ReasonGateExpired, flowState(env.FlowID).Decisions["gate"].Reason)

	code, _, errOut = run(t, home, "cron", "add", "--name", "ship", "--every", "1h", "--pipeline", file, "--gate-timeout", "1s")
	require.Equal(t, 0, code, errOut)
	code, _, errOut = run(t, home, "cron", "run", "ship")
	require.Equal(t, 0, code, errOut)
	require.Eventually(t, func() bool {
		status, _, _, _ := lastRun(t, home, "ship")
		return status == "cancelled"
	}, 30*time.Second, 50*time.Millisecond, "the unanswered gate expires")
	_, errText, _, _ := lastRun(t, home, "ship")
	require.True(t, strings.HasPrefix(errText, "gate-expired: "), errText)
	_, err := os.Stat(out)
	require.True(t, os.IsNotExist(err), "an expired gate runs nothing after it")
}
