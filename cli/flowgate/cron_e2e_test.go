package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/scheduler"
)

// TestCronSurvivesGatewaySIGKILL schedules an @every 1s command job and a
// pipeline job through a real gateway process, SIGKILLs the gateway twice
// while they run, restarts it each time, and checks that both kept
// running and recording history, and that no scheduled time ran twice:
// every run appends its scheduled time (or run id) to a file, and each
// line must be unique and match one successful run in the history.
func TestCronSurvivesGatewaySIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	cmdLog := filepath.Join(work, "command-runs")
	pipeLog := filepath.Join(work, "pipeline-runs")
	wf := filepath.Join(work, "tick.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: tick
steps:
  - id: note
    run: echo "$FLOWGATE_CRON_RUN_ID" >> `+pipeLog+`
`), 0o600))
	lines := func(path string) []string {
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			return nil
		}
		require.NoError(t, err)
		return strings.Fields(string(b))
	}
	waitLines := func(path string, n int) {
		t.Helper()
		polltest.Until(t, "", func() (bool, string) {
			got := len(lines(path))
			return got >= n, fmt.Sprintf("%s has %d lines, want %d", path, got, n)
		}, polltest.Within(60*time.Second), polltest.Every(100*time.Millisecond))
	}

	g := startGateway(t, bin, home, logf)
	flowgate(t, bin, "--home", home, "cron", "add", "--name", "every-second", "--cron", "@every 1s", "--overlap", "allow_all",
		"--command", `echo "$FLOWGATE_CRON_SCHEDULED" >> `+cmdLog)
	flowgate(t, bin, "--home", home, "cron", "add", "--name", "pipeline", "--every", "2s", "--pipeline", wf)

	for round := range 2 {
		waitLines(cmdLog, 3*(round+1))
		waitLines(pipeLog, round+1)
		g.kill(t)
		g = startGateway(t, bin, home, logf)
	}
	waitLines(cmdLog, 9)
	waitLines(pipeLog, 3)
	flowgate(t, bin, "--home", home, "cron", "disable", "every-second")
	flowgate(t, bin, "--home", home, "cron", "disable", "pipeline")

	// Every run ends; then the files and the history must agree.
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	settled := func(job string) []apitype.CronRun {
		var runs []apitype.CronRun
		polltest.Until(t, "", func() (bool, string) {
			var err error
			runs, err = c.JobRuns(ctx, job, 0)
			require.NoError(t, err)
			open := 0
			for _, r := range runs {
				if r.Open() {
					open++
				}
			}
			return open == 0, fmt.Sprintf("job %s still has %d open runs", job, open)
		}, polltest.Within(60*time.Second), polltest.Every(100*time.Millisecond))
		return runs
	}
	cmdRuns, pipeRuns := settled("every-second"), settled("pipeline")
	g.stop(t)

	okTimes := map[string]bool{}
	for _, r := range cmdRuns {
		require.Equal(t, scheduler.TriggerSchedule, r.Trigger)
		if r.Status == scheduler.RunOK {
			okTimes[r.Scheduled.UTC().Format(time.RFC3339Nano)] = true
		}
	}
	ran := lines(cmdLog)
	seen := map[string]bool{}
	for _, l := range ran {
		require.False(t, seen[l], "scheduled time %s ran twice", l)
		seen[l] = true
		require.True(t, okTimes[l], "scheduled time %s ran but its run is not ok in the history", l)
	}
	require.Len(t, okTimes, len(ran), "every ok run ran exactly once")

	okRuns := map[string]bool{}
	for _, r := range pipeRuns {
		require.NotEmpty(t, r.FlowID, "a pipeline run is a flow: %+v", r)
		if r.Status == scheduler.RunOK {
			okRuns[r.ID] = true
		}
	}
	ran = lines(pipeLog)
	seen = map[string]bool{}
	for _, l := range ran {
		require.False(t, seen[l], "pipeline run %s ran twice", l)
		seen[l] = true
		require.True(t, okRuns[l], "pipeline run %s ran but is not ok in the history", l)
	}
	require.Len(t, okRuns, len(ran))

	t.Logf("command job: %d runs recorded, %d ran; pipeline job: %d runs recorded, %d ran", len(cmdRuns), len(okTimes), len(pipeRuns), len(okRuns))
	var list struct {
		Count int               `json:"count"`
		Runs  []apitype.CronRun `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(flowgate(t, bin, "--home", home, "cron", "runs", "every-second", "--json", "--limit", "0")), &list))
	require.Equal(t, len(cmdRuns), list.Count, "cron runs works with no gateway running")
}
