package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// The real gateway binary runs the pipeline controller inside its own
// process (plugins list names the gateway's pid), and, with
// plugins: [{name: pipeline, isolate: true}], as a plugin process of its
// own; a two-step pipeline runs to the end in both.
func TestPipelineControllerInProcessOrIsolated(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	for _, isolate := range []bool{false, true} {
		t.Run(fmt.Sprintf("isolate=%v", isolate), func(t *testing.T) {
			home, work, logf := e2eDirs(t)
			wf := filepath.Join(work, "two.lobster")
			require.NoError(t, os.WriteFile(wf, []byte("name: two\nsteps:\n  - id: a\n    run: echo hello\n  - id: b\n    run: tr a-z A-Z\n    stdin: $a.stdout\n"), 0o600))
			var extra []string
			if isolate {
				cfg := filepath.Join(work, "gateway.yaml")
				require.NoError(t, os.WriteFile(cfg, []byte("plugins:\n  - name: pipeline\n    isolate: true\n"), 0o600))
				extra = []string{"--config", cfg}
			}
			g := startGateway(t, bin, home, logf, extra...)
			defer g.kill(t)

			var p apitype.PluginStatus
			polltest.Until(t, "", func() (bool, string) {
				var list struct{ Plugins []apitype.PluginStatus }
				out := flowgate(t, bin, "--home", home, "plugins", "list", "--json")
				require.NoError(t, json.Unmarshal([]byte(out), &list), out)
				require.Len(t, list.Plugins, 1, out)
				p = list.Plugins[0]
				return p.State == apitype.PluginRunning, "the pipeline controller is not running: " + out
			}, polltest.Within(30*time.Second), polltest.Every(20*time.Millisecond))
			require.Equal(t, "pipeline", p.Name)
			require.Equal(t, !isolate, p.InProcess)
			if isolate {
				require.NotEqual(t, g.cmd.Process.Pid, p.PID, "a plugin process of its own")
			} else {
				require.Equal(t, g.cmd.Process.Pid, p.PID, "inside the gateway's process")
			}

			id := runDetached(t, bin, home, wf)
			var v apitype.FlowView
			polltest.Until(t, "", func() (bool, string) {
				v = viewFlow(t, home, id)
				return v.Status.Terminal(), fmt.Sprintf("flow %s is %s", id, v.Status)
			}, polltest.Within(30*time.Second), polltest.Every(20*time.Millisecond))
			require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)
			require.Len(t, v.Tasks, 2)
			require.Equal(t, "HELLO\n", v.Tasks[1].Result.Stdout)
		})
	}
}

// A 6-way for_each under the real gateway binary, SIGKILLed while its
// items run and again once some have ended, ends with every item run
// exactly once and its rows in item order.
func TestForEachFanOutSurvivesGatewaySIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	runs := filepath.Join(work, "runs")
	require.NoError(t, os.Mkdir(runs, 0o700))
	wf := filepath.Join(work, "fan.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: fan
steps:
  - id: each
    for_each: '[1, 2, 3, 4, 5, 6]'
    steps:
      - id: work
        run: echo ran >> `+runs+`/$item.stdout; sleep 1; echo $item.stdout
`), 0o600))
	g := startGateway(t, bin, home, logf)
	id := runDetached(t, bin, home, wf)
	ranItems := func() int {
		es, err := os.ReadDir(runs)
		require.NoError(t, err)
		return len(es)
	}
	polltest.Until(t, "", func() (bool, string) {
		return ranItems() > 0, "no item started"
	}, polltest.Within(30*time.Second), polltest.Every(20*time.Millisecond))
	g.kill(t) // items running
	g = startGateway(t, bin, home, logf)
	polltest.Until(t, "", func() (bool, string) {
		for _, task := range viewFlow(t, home, id).Tasks {
			if task.Status == sdk.TaskSucceeded {
				return true, ""
			}
		}
		return false, "no item ended"
	}, polltest.Within(30*time.Second), polltest.Every(20*time.Millisecond))
	g.kill(t) // some items ended, their events maybe not handled
	g = startGateway(t, bin, home, logf)
	defer g.kill(t)
	var v apitype.FlowView
	polltest.Until(t, "", func() (bool, string) {
		v = viewFlow(t, home, id)
		return v.Status.Terminal(), fmt.Sprintf("flow %s is %s", id, v.Status)
	}, polltest.Within(60*time.Second), polltest.Every(50*time.Millisecond))
	require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)
	require.Len(t, v.Tasks, 6, "one task an item")
	for i := 1; i <= 6; i++ {
		b, err := os.ReadFile(filepath.Join(runs, fmt.Sprint(i)))
		require.NoError(t, err)
		require.Equal(t, "ran\n", string(b), "item %d ran exactly once", i)
	}
	out, err := v.Output.ReadValue(nil)
	require.NoError(t, err)
	require.JSONEq(t, `[{"item":1,"index":0,"work":1},{"item":2,"index":1,"work":2},{"item":3,"index":2,"work":3},`+
		`{"item":4,"index":3,"work":4},{"item":5,"index":4,"work":5},{"item":6,"index":5,"work":6}]`, string(out))
}
