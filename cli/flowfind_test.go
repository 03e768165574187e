package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/trigger"
)

// listGoals runs `tasks flow list --json` with args on home and returns
// the goals it lists, newest first.
func listGoals(t *testing.T, home string, args ...string) []string {
	t.Helper()
	code, out, errOut := run(t, home, append([]string{"tasks", "flow", "list", "--json"}, args...)...)
	require.Equal(t, 0, code, "%v: %s", args, errOut)
	var l struct {
		Count int
		Flows []struct{ Goal string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	goals := []string{}
	for _, f := range l.Flows {
		goals = append(goals, f.Goal)
	}
	require.Len(t, goals, l.Count)
	return goals
}

// TestFlowListFindFlags lists flows by search text, time, cron job and
// trigger, both from the store and through a running gateway (where the
// filter crosses the API), and refuses bad values by flag name.
func TestFlowListFindFlags(t *testing.T) {
	t.Parallel()
	for _, h := range cronHomes {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			home := shortHome(t)
			code, out, errOut := run(t, home, "cron", "add", "--name", "nightly", "--every", "24h", "--command", "true", "--json")
			require.Equal(t, 0, code, errOut)
			var job scheduler.Job
			require.NoError(t, json.Unmarshal([]byte(out), &job))
			seed(t, home, func(eng *engine.Engine) {
				for _, in := range []engine.CreateFlowInput{
					{OwnerKey: scheduler.JobOwnerKey(job.ID), Goal: "nightly"},
					{OwnerKey: trigger.OwnerKey("deploy"), Goal: "trigger deploy"},
					{OwnerKey: "me", Goal: "Weekly Report"},
					{OwnerKey: scheduler.JobOwnerKey(job.ID), Goal: "nightly"},
				} {
					in.ControllerID = "pipeline"
					_, err := eng.CreateFlow(in)
					require.NoError(t, err)
				}
			})
			if h.gateway {
				startGateway(t, home)
			}
			require.Equal(t, []string{"Weekly Report"}, listGoals(t, home, "--search", "weekly"))
			require.Equal(t, []string{"Weekly Report"}, listGoals(t, home, "--search", "REPORT"))
			require.Equal(t, []string{"nightly", "nightly"}, listGoals(t, home, "--cron", "nightly"))
			require.Equal(t, []string{"nightly", "nightly"}, listGoals(t, home, "--cron", job.ID))
			require.Equal(t, []string{"trigger deploy"}, listGoals(t, home, "--trigger", "deploy"))
			require.Equal(t, []string{"nightly"}, listGoals(t, home, "--cron", "nightly", "--limit", "1"))
			require.Len(t, listGoals(t, home, "--since", "2000-01-01 00:00"), 4)
			require.Empty(t, listGoals(t, home, "--until", "2000-01-01T00:00:00Z"))
			require.Empty(t, listGoals(t, home, "--search", "weekly", "--cron", "nightly"))

			for _, tc := range []struct {
				args []string
				code int
				says string
			}{
				{[]string{"--since", "yesterday"}, 2, `--since: "yesterday" is not a time`},
				{[]string{"--since", "2026-03-02 00:00", "--until", "2026-03-01 00:00"}, 2, "give a --since before the --until"},
				{[]string{"--cron", "ghost"}, 1, `cron job "ghost"`},
				{[]string{"--cron", "nightly", "--trigger", "deploy"}, 2, "give one of owner, cron job and trigger"},
			} {
				code, _, errOut := run(t, home, append([]string{"tasks", "flow", "list", "--json"}, tc.args...)...)
				require.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
				require.Contains(t, errOut, tc.says, tc.args)
			}
		})
	}
}
