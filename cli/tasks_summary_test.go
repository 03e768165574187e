package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// TestTasksSummaryCountsByRuntime: tasks summary counts real runs of
// several runtimes by status and by runtime, as the reference's task
// registry summary does, in text and in --json.
func TestTasksSummaryCountsByRuntime(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, out, _ := run(t, home, "tasks", "summary")
	require.Equal(t, 0, code)
	require.Equal(t, "Tasks: 0 · 0 active · 0 terminal · 0 failures\n", out)

	for _, r := range []struct {
		argv []string
		code int
	}{{[]string{"--", "true"}, 0}, {[]string{"--", "false"}, 1}, {[]string{"--agent", "--", "true"}, 0}} {
		code, _, errOut := run(t, home, append([]string{"tasks", "run"}, r.argv...)...)
		require.Equal(t, r.code, code, errOut)
	}
	seed(t, home, func(eng *engine.Engine) {
		// No command: a task the cron runtime runs, left queued.
		_, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Runtime: "cron", Label: "nightly"})
		require.NoError(t, err)
	})

	code, out, errOut := run(t, home, "tasks", "summary", "--json")
	require.Equal(t, 0, code, errOut)
	var s sdk.TaskSummary
	require.NoError(t, json.Unmarshal([]byte(out), &s), out)
	require.Equal(t, sdk.TaskSummary{
		Total: 4, Active: 1, Terminal: 3, Failures: 1,
		ByStatus:  map[sdk.TaskStatus]int{sdk.TaskQueued: 1, sdk.TaskSucceeded: 2, sdk.TaskFailed: 1},
		ByRuntime: map[string]int{"cli": 2, sdk.RuntimeAgent: 1, "cron": 1},
	}, s)

	code, out, _ = run(t, home, "tasks", "summary")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Tasks: 4 · 1 active · 3 terminal · 1 failures\n")
	require.Regexp(t, `(?m)^succeeded\s+2$`, out)
	require.Regexp(t, `(?m)^cli\s+2$`, out)
	require.Regexp(t, `(?m)^agent\s+1$`, out)
	require.Regexp(t, `(?m)^cron\s+1$`, out)

	code, _, errOut = run(t, home, "tasks", "summary", "extra")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "no arguments")
}
