package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/plugintest/exampletest"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// TestExampleControllersEndToEnd runs the Go, Python and TypeScript
// example controllers under one real gateway and drives a flow of each
// through the CLI as a user would: tasks flow create, then tasks flow
// show until the flow is done. The two-step examples also fail a flow
// whose second task fails, naming it, and their pipeline stages run in a
// pipeline string.
func TestExampleControllersEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	ts := "../../examples/controllers/two-step-ts"
	exampletest.Require(t, ts)
	exampletest.Require(t, "../../examples/controllers/two-step-py")
	bin := buildFlowgate(t)
	hello := filepath.Join(t.TempDir(), "hello")
	out, err := exec.Command("go", "build", "-o", hello, "../../examples/controllers/hello").CombinedOutput()
	require.NoError(t, err, "%s", out)
	py, err := filepath.Abs("../../examples/controllers/two-step-py/plugin")
	require.NoError(t, err)
	tsPlugin, err := filepath.Abs(filepath.Join(ts, "plugin"))
	require.NoError(t, err)

	home, work, logf := e2eDirs(t)
	cfg := filepath.Join(work, "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("plugins:\n"+
		"  - name: hello\n    path: "+hello+"\n"+
		"  - name: two-step-py\n    path: "+py+"\n"+
		"  - name: two-step-ts\n    path: "+tsPlugin+"\n"), 0o600))
	g := startGateway(t, bin, home, logf, "--config", cfg)
	defer g.kill(t)

	cases := []struct {
		controller string
		state      string
		status     sdk.FlowStatus
		tasks      int
		results    []string // the final state's results, when it succeeds
		failure    string   // the blocked summary, when it fails
	}{
		{"hello", "", sdk.FlowSucceeded, 3, []string{"hello", "from", "flowgate"}, ""},
		{"two-step-py", "", sdk.FlowSucceeded, 2, []string{"step one", "step two"}, ""},
		{"two-step-ts", "", sdk.FlowSucceeded, 2, []string{"step one", "step two"}, ""},
		{"two-step-py", `{"steps":["echo one","exit 3"]}`, sdk.FlowFailed, 2, nil, "step 2 (exit 3) failed with exit code 3"},
		{"two-step-ts", `{"steps":["echo one","exit 3"]}`, sdk.FlowFailed, 2, nil, "step 2 (exit 3) failed with exit code 3"},
	}
	ids := make([]string, len(cases))
	for i, c := range cases {
		args := []string{"--home", home, "tasks", "flow", "create", "--controller", c.controller, "--goal", "e2e " + c.controller, "--owner", "e2e", "--json"}
		if c.state != "" {
			args = append(args, "--state", c.state)
		}
		out, err := exec.Command(bin, args...).Output()
		require.NoError(t, err, "flow create for %s: %s", c.controller, out)
		var f sdk.Flow
		require.NoError(t, json.Unmarshal(out, &f), "%s", out)
		ids[i] = f.ID
	}
	for i, c := range cases {
		v := showUntilDone(t, bin, home, ids[i])
		require.Equal(t, c.status, v.Status, "%s flow %s: %s (controller error: %s)", c.controller, v.ID, v.BlockedSummary, v.ControllerError)
		require.Len(t, v.Tasks, c.tasks, c.controller)
		require.Equal(t, c.failure, v.BlockedSummary, c.controller)
		if c.results != nil {
			var state struct{ Results []string }
			require.NoError(t, json.Unmarshal(v.State, &state), "%s", v.State)
			require.Equal(t, c.results, state.Results, c.controller)
		}
	}

	// The two-step examples each provide a pipeline stage, which a
	// pipeline string run through the gateway calls.
	run := exec.Command(bin, "--home", home, "pipeline", "run",
		`exec --json --shell "echo '[\"a\",1]'" | two-step-py.shout | two-step-ts.shout`)
	var stderr strings.Builder
	run.Stderr = &stderr
	out, err = run.Output()
	require.NoError(t, err, "pipeline run with the examples' stages: %s", stderr.String())
	require.JSONEq(t, `["A",1]`, string(out))
}

// showUntilDone runs tasks flow show --json until the flow has ended,
// for at most a minute.
func showUntilDone(t *testing.T, bin, home, id string) engine.FlowView {
	t.Helper()
	var v engine.FlowView
	polltest.Until(t, "", func() (bool, string) {
		out, err := exec.Command(bin, "--home", home, "tasks", "flow", "show", id, "--json").Output()
		require.NoError(t, err, "flow show %s: %s", id, out)
		v = engine.FlowView{}
		require.NoError(t, json.Unmarshal(out, &v), "%s", out)
		return v.Status.Terminal(), fmt.Sprintf("flow %s is still %s: %s", id, v.Status, strings.TrimSpace(v.ControllerError))
	}, polltest.Within(time.Minute), polltest.Every(100*time.Millisecond))
	return v
}

// flowHistory reads the history of flow id with `flowgate tasks flow
// history --json`.
func flowHistory(t *testing.T, bin, home, id string) engine.HistoryPage {
	t.Helper()
	out, err := exec.Command(bin, "--home", home, "tasks", "flow", "history", id, "--json").Output()
	require.NoError(t, err, "flow history %s: %s", id, out)
	var page engine.HistoryPage
	require.NoError(t, json.Unmarshal(out, &page), "%s", out)
	return page
}
