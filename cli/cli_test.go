package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/cli"
	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// run runs the flowgate command line on home and returns its exit code and
// output.
func run(t *testing.T, home string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = cli.Main(append([]string{"--home", home}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// seed opens the store of home directly and lets fn write records.
func seed(t *testing.T, home string, fn func(eng *engine.Engine)) {
	t.Helper()
	l, err := api.OpenLocal(home, "test seed")
	require.NoError(t, err)
	defer l.Close()
	fn(l.Engine())
}

func flowCount(t *testing.T, home string) int {
	t.Helper()
	code, out, errOut := run(t, home, "tasks", "flow", "list", "--json")
	require.Equal(t, 0, code, errOut)
	var l struct{ Count int }
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	return l.Count
}

func TestFlowCreateShowUpdateCancel(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	code, out, errOut := run(t, home, "tasks", "flow", "create", "--controller", "ctl", "--goal", "ship it", "--owner", "me", "--state", `{"n":1}`, "--json")
	require.Equal(t, 0, code, errOut)
	var f sdk.Flow
	require.NoError(t, json.Unmarshal([]byte(out), &f))
	require.Equal(t, sdk.SyncManaged, f.SyncMode)
	require.JSONEq(t, `{"n":1}`, string(f.State))

	code, out, _ = run(t, home, "tasks", "flow", "show", "me")
	require.Equal(t, 0, code)
	require.Contains(t, out, "TaskFlow:")
	require.Contains(t, out, f.ID)
	require.Contains(t, out, "Linked tasks: none")

	code, out, errOut = run(t, home, "tasks", "flow", "update", f.ID, "--expected-revision", "1", "--status", "running", "--state", `{"n":2}`)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "revision 2")

	code, _, errOut = run(t, home, "tasks", "flow", "update", f.ID, "--expected-revision", "1", "--state", `{"n":3}`)
	require.Equal(t, 3, code, "a stale revision exits 3")
	require.Contains(t, errOut, "current revision is 2")

	code, out, _ = run(t, home, "tasks", "flow", "show", f.ID, "--json")
	require.Equal(t, 0, code)
	var v struct {
		sdk.Flow
		Tasks       []apitype.Task  `json:"tasks"`
		TaskSummary sdk.TaskSummary `json:"task_summary"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	require.Equal(t, int64(2), v.Revision)
	require.JSONEq(t, `{"n":2}`, string(v.State), "the stale update wrote nothing")
	require.NotNil(t, v.Tasks)

	code, out, errOut = run(t, home, "tasks", "flow", "cancel", f.ID)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Cancelled "+f.ID+" (managed) with status cancelled.")

	code, _, errOut = run(t, home, "tasks", "flow", "cancel", f.ID)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "already cancelled")
}

func TestFlowListLayout(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	code, out, _ := run(t, home, "tasks", "flow", "list")
	require.Equal(t, 0, code)
	require.Equal(t, "TaskFlows: 0\nTaskFlow pressure: 0 active · 0 blocked · 0 cancel-requested · 0 total\nNo TaskFlows found.\n", out)

	var flowID string
	seed(t, home, func(eng *engine.Engine) {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "pipeline", Goal: "nightly"})
		require.NoError(t, err)
		flowID = f.ID
		task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Label: "step"})
		require.NoError(t, err)
		_, err = eng.StartTask(task.ID, engine.StartInput{})
		require.NoError(t, err)
		_, _, err = eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Label: "detached"})
		require.NoError(t, err)
	})
	code, out, _ = run(t, home, "tasks", "flow", "list")
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, "TaskFlows: 2", lines[0])
	require.Equal(t, "TaskFlow pressure: 2 active · 0 blocked · 0 cancel-requested · 2 total", lines[1])
	require.Regexp(t, `^TaskFlow\s+Mode\s+Status\s+Rev\s+Controller\s+Tasks\s+Goal$`, lines[2])
	require.Contains(t, out, "1 active/1 total")
	col := strings.Index(lines[2], "Status")
	for _, l := range lines[3:] {
		require.NotEqual(t, ' ', l[col], "columns are aligned: %q", l)
	}

	code, out, _ = run(t, home, "tasks", "flow", "list", "--status", "queued", "--mode", "managed", "--json")
	require.Equal(t, 0, code)
	var l struct {
		Count  int
		Status string
		Flows  []struct {
			ID          string          `json:"id"`
			Tasks       []apitype.Task  `json:"tasks"`
			TaskSummary sdk.TaskSummary `json:"task_summary"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Equal(t, 1, l.Count)
	require.Equal(t, "queued", l.Status)
	require.Equal(t, flowID, l.Flows[0].ID)
	require.Len(t, l.Flows[0].Tasks, 1)
	require.Equal(t, 1, l.Flows[0].TaskSummary.Active)

	code, out, _ = run(t, home, "tasks", "flow", "cancel", flowID)
	require.Equal(t, 0, code)
	require.Contains(t, out, "Cancel requested for "+flowID)
	code, out, _ = run(t, home, "tasks", "flow", "list")
	require.Equal(t, 0, code)
	require.Contains(t, out, "1 cancel-requested")
}

func TestTasksListShowCancel(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var queued, running *apitype.Task
	seed(t, home, func(eng *engine.Engine) {
		var err error
		queued, _, err = eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Label: "first", IdempotencyKey: "key-1"})
		require.NoError(t, err)
		// No command: a task some other runtime runs, which the runner
		// leaves alone.
		running, _, err = eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Runtime: "cron", Label: "echo hi"})
		require.NoError(t, err)
		_, err = eng.StartTask(running.ID, engine.StartInput{PID: 7})
		require.NoError(t, err)
	})

	code, out, _ := run(t, home, "tasks")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Background tasks: 2\nTask pressure: 1 queued · 1 running · 0 issues\n")
	require.Contains(t, out, "echo hi")

	code, out, _ = run(t, home, "tasks", "list", "--runtime", "cron", "--json")
	require.Equal(t, 0, code)
	var l struct {
		Count   int
		Runtime string
		Status  *string
		Tasks   []apitype.Task
	}
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Equal(t, 1, l.Count)
	require.Equal(t, "cron", l.Runtime)
	require.Nil(t, l.Status)
	require.Equal(t, running.ID, l.Tasks[0].ID)

	code, out, _ = run(t, home, "tasks", "show", "key-1", "--json")
	require.Equal(t, 0, code)
	var got apitype.Task
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, queued.ID, got.ID)

	code, out, _ = run(t, home, "tasks", "show", running.ID)
	require.Equal(t, 0, code)
	require.Contains(t, out, "Background task:")
	require.Regexp(t, `status:\s+running`, out)

	code, out, _ = run(t, home, "tasks", "cancel", queued.ID)
	require.Equal(t, 0, code)
	require.Equal(t, "Cancelled "+queued.ID+" (cli).\n", out)
	code, out, _ = run(t, home, "tasks", "cancel", running.ID)
	require.Equal(t, 0, code)
	require.Contains(t, out, "Cancel requested for "+running.ID)
}

func TestBadInputIsRefusedAndWritesNothing(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var flowID string
	seed(t, home, func(eng *engine.Engine) {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g"})
		require.NoError(t, err)
		flowID = f.ID
	})
	cases := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"unknown task status", []string{"tasks", "list", "--status", "bogus"}, 2, `"bogus"`},
		{"unknown flow status", []string{"tasks", "flow", "list", "--status", "nope"}, 2, `"nope"`},
		{"unknown sync mode", []string{"tasks", "flow", "list", "--mode", "x"}, 2, `"x"`},
		{"malformed state on create", []string{"tasks", "flow", "create", "--controller", "c", "--goal", "g", "--owner", "o", "--state", "{bad"}, 2, "--state is not valid JSON"},
		{"malformed state on update", []string{"tasks", "flow", "update", flowID, "--expected-revision", "0", "--state", "[1,"}, 2, "--state is not valid JSON"},
		{"update to unknown status", []string{"tasks", "flow", "update", flowID, "--expected-revision", "0", "--status", "done"}, 2, `"done"`},
		{"non-numeric revision", []string{"tasks", "flow", "update", flowID, "--expected-revision", "abc"}, 2, `"abc"`},
		{"missing revision", []string{"tasks", "flow", "update", flowID, "--state", "1"}, 2, "--expected-revision is required"},
		{"missing goal", []string{"tasks", "flow", "create", "--controller", "c", "--owner", "o"}, 2, "goal is required"},
		{"missing task", []string{"tasks", "show", "no-such-task"}, 1, `"no-such-task"`},
		{"missing flow", []string{"tasks", "flow", "show", "no-such-flow"}, 1, `"no-such-flow"`},
		{"missing flow on update", []string{"tasks", "flow", "update", "no-such-flow", "--expected-revision", "0"}, 1, `"no-such-flow"`},
		{"cancel missing task", []string{"tasks", "cancel", "ghost"}, 1, `"ghost"`},
		{"no id", []string{"tasks", "show"}, 2, "needs one task id"},
		{"unknown flag", []string{"tasks", "list", "--colour"}, 2, "--colour"},
		{"unknown command", []string{"taks"}, 2, `unknown command "taks"`},
		{"negative limit", []string{"tasks", "flow", "list", "--limit", "-1"}, 2, "--limit"},
	}
	for _, c := range cases {
		code, out, errOut := run(t, home, c.args...)
		require.Equal(t, c.code, code, "%s: stderr %q", c.name, errOut)
		require.Contains(t, errOut, c.says, c.name)
		require.Empty(t, out, c.name)
	}
	require.Equal(t, 1, flowCount(t, home))
	code, out, _ := run(t, home, "tasks", "flow", "show", flowID, "--json")
	require.Equal(t, 0, code)
	var f sdk.Flow
	require.NoError(t, json.Unmarshal([]byte(out), &f))
	require.Equal(t, int64(1), f.Revision, "no refused command wrote anything")
}

func TestControlCharactersAreMadeVisible(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	evil := "pwn\x1b[31mred\x07\nnext\tcol\u202e"
	code, _, errOut := run(t, home, "tasks", "flow", "create", "--controller", "c\x1b]0;x", "--goal", evil, "--owner", "o")
	require.Equal(t, 0, code, errOut)
	for _, args := range [][]string{{"tasks", "flow", "list"}, {"tasks", "flow", "show", "o"}} {
		code, out, _ := run(t, home, args...)
		require.Equal(t, 0, code)
		require.NotContains(t, out, "\x1b")
		require.NotContains(t, out, "\x07")
		require.NotContains(t, out, "\u202e")
		require.Contains(t, out, `pwn\x1b[31mred\x07\nnext\tcol\u202e`)
	}
	// JSON keeps the exact text, escaped by the encoder.
	code, out, _ := run(t, home, "tasks", "flow", "show", "o", "--json")
	require.Equal(t, 0, code)
	var f sdk.Flow
	require.NoError(t, json.Unmarshal([]byte(out), &f))
	require.Equal(t, strings.TrimSpace(evil), f.Goal)
	require.NotContains(t, out, "\x1b")
}

// TestMain lets this test binary serve as the flowgate binary when the
// gateway under test starts it as a task's shim or a first-party plugin,
// or when a test runs it as a gateway process to kill or as "tasks run"
// (flowgate bench does), as the fake agent command-line tool of the
// session tests, and as a controller plugin that provides pipeline stages.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "shim" || os.Args[1] == "llm-invoke" || os.Args[1] == "plugin" || os.Args[1] == "gateway" || os.Args[1] == "tasks") {
		os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == fakeAgentCmd {
		os.Exit(fakeAgent(os.Args[2:]))
	}
	if len(os.Args) > 2 && os.Args[1] == stagePluginCmd {
		sdk.Serve(stagePlugin{name: os.Args[2]})
		os.Exit(0)
	}
	code := m.Run()
	sharedEtcd.Close()
	os.Exit(code)
}

func TestDemoRuns(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	code := cli.Main([]string{"demo"}, &out, &errb)
	require.Equal(t, 0, code, errb.String())
	for _, want := range []string{
		"milestone 2: report-rendered", // progress and milestones
		"worked on attempt 2",          // a retry
		"long job",                     // a cancelled task
		"current revision is 1",        // a revision conflict
		`"status": "needs_approval"`,   // a pipeline at its gate
		`"average": 101.5`,             // the pipeline's output after approval
		"Gateway running for",
	} {
		require.Contains(t, out.String(), want)
	}
	require.Regexp(t, `Run cron:\S+ ended ok`, out.String(), "cron run --wait")
	require.Regexp(t, `\bok\s+schedule\b`, out.String(), "the heartbeat fired on its schedule")
	require.Regexp(t, `(?m)^heartbeat for 20\d\d-`, out.String(), "the scheduled run's output")
	require.Regexp(t, `TaskFlows: \d+`, out.String())
	require.Regexp(t, `cancelled\s+\S+\s+1\s+long job`, out.String())
}
