package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// standInGh writes, into a directory of its own, a gh that records its
// arguments in argv there (and one line a call in calls) and prints the
// PR state in current.json there, as gh pr view --json does; when a file
// fail is there, it writes that file's text to stderr and exits 4
// instead. It returns the directory.
func standInGh(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" + dir + "/argv'\necho call >> '" + dir + "/calls'\n" +
		"if [ -f '" + dir + "/fail' ]; then cat '" + dir + "/fail' >&2; exit 4; fi\n" +
		"cat '" + dir + "/current.json'\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "gh"), []byte(script), 0o755))
	return dir
}

// prState makes the stand-in gh print the fixture name of
// flows/testdata/lobster.
func prState(t *testing.T, ghDir, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "flows", "testdata", "lobster", name))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(ghDir, "current.json"), b, 0o600))
}

// prWatchFile writes a workflow file whose one pipeline: step runs the
// recipe named by its arg name with the --args-json of its arg opts,
// followed by the stages of tail, with path as the steps' PATH.
func prWatchFile(t *testing.T, path, tail string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "pr-watch.lobster")
	wf := "name: pr-watch\nargs:\n  name: {default: github.pr.monitor}\n  opts: {default: ''}\n" +
		"env:\n  PATH: " + jsonString(t, path) + "\n" +
		"steps:\n  - id: watch\n    pipeline: workflows.run --name ${name} --args-json '{\"repo\":\"openclaw/openclaw\",\"pr\":1152${opts}}'" + tail + "\n"
	require.NoError(t, os.WriteFile(file, []byte(wf), 0o600))
	return file
}

func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}

// TestWorkflowsRunThroughAPipelineStep runs Lobster's PR recipes as a
// user does, in a workflow file's pipeline: step, against a stand-in gh
// on the steps' PATH: the first run reports every field as new, the same
// state again is no change (and with changesOnly is suppressed), a
// changed state is the notify recipe's one message, and each item is
// real Lobster's bytes for the same gh output; gh is run with Lobster's
// arguments, and the state stays in the flowgate home between runs.
func TestWorkflowsRunThroughAPipelineStep(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	gh := standInGh(t)
	file := prWatchFile(t, gh+string(os.PathListSeparator)+os.Getenv("PATH"), "")
	for _, c := range []struct{ fixture, args, golden string }{
		{"pr_open.json", `{"name":"github.pr.monitor"}`, "pr_monitor_first"},
		{"pr_open.json", `{"name":"github.pr.monitor"}`, "pr_monitor_unchanged"},
		{"pr_open.json", `{"name":"github.pr.monitor","opts":",\"changesOnly\":true"}`, "pr_monitor_changes_only"},
		{"pr_open.json", `{"name":"github.pr.monitor.notify"}`, "pr_notify_unchanged"},
		{"pr_approved.json", `{"name":"github.pr.monitor.notify"}`, "pr_notify_changed"},
		{"pr_open.json", `{"name":"github.pr.monitor","opts":",\"summaryOnly\":true"}`, "pr_monitor_summary_only"},
	} {
		prState(t, gh, c.fixture)
		code, stdout, errOut := run(t, home, "pipeline", "run", file, "--args-json", c.args)
		require.Equal(t, 0, code, errOut)
		require.Equal(t, lobsterOut(t, c.golden), stdout, c.golden)
		argv, err := os.ReadFile(filepath.Join(gh, "argv"))
		require.NoError(t, err)
		require.Equal(t, lobsterOut(t, "gh_argv"), string(argv), "gh pr view with Lobster's arguments")
	}

	code, stdout, errOut := run(t, home, "pipeline", "run", "workflows.list")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, lobsterOut(t, "workflows_list"), stdout)
	code, stdout, errOut = run(t, home, "pipeline", "run", "commands.list | pick name")
	require.Equal(t, 0, code, errOut)
	var listed []struct{ Name string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &listed))
	names := map[string]bool{}
	for _, c := range listed {
		names[c.Name] = true
	}
	// Lobster 2026.9.13's commands.list, less the five stages that call
	// OpenClaw or gog (docs/pipelines.md says why).
	for _, n := range []string{"approve", "ask", "commands.list", "dedupe", "diff.last", "email.triage", "exec", "groupBy", "head", "json", "llm.invoke", "llm_task.invoke", "map", "pick", "sort", "state.get", "state.set", "table", "template", "where", "workflows.list", "workflows.run"} {
		require.True(t, names[n], "commands.list lists %s", n)
	}
}

// TestWorkflowsRunFailsWithLobstersMessages: a bad name, bad JSON, a
// missing arg, an empty key, a failing gh and no gh at all each fail the
// step (exit 1) with Lobster's message, and none of them stores a state:
// the next good run is still a first run. A kept state that is damaged
// fails the step, naming its file.
func TestWorkflowsRunFailsWithLobstersMessages(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	gh := standInGh(t)
	prState(t, gh, "pr_open.json")
	file := prWatchFile(t, gh+string(os.PathListSeparator)+os.Getenv("PATH"), "")
	for args, want := range map[string]string{
		`{"name":"nope"}`:          "Unknown workflow: nope",
		`{"opts":",oops"}`:         "workflows.run --args-json must be valid JSON",
		`{"opts":",\"pr\":0"}`:     "github.pr.monitor requires args.repo and args.pr",
		`{"opts":",\"key\":\"\""}`: `state key "" is empty/invalid`,
	} {
		code, _, errOut := run(t, home, "pipeline", "run", file, "--args-json", args)
		require.Equal(t, 1, code, "%s: %s", args, errOut)
		require.Contains(t, errOut, want, args)
		_, err := os.Stat(filepath.Join(gh, "argv"))
		require.ErrorIs(t, err, os.ErrNotExist, "%s: refused before gh ran", args)
	}

	require.NoError(t, os.WriteFile(filepath.Join(gh, "fail"), []byte("GraphQL: Could not resolve to a PullRequest\n"), 0o600))
	code, _, errOut := run(t, home, "pipeline", "run", file)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "gh failed (4): GraphQL: Could not resolve to a PullRequest")
	require.NoError(t, os.Remove(filepath.Join(gh, "fail")))

	require.NoError(t, os.WriteFile(filepath.Join(gh, "current.json"), []byte("<html>rate limited</html>\n"), 0o600))
	code, _, errOut = run(t, home, "pipeline", "run", file)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "gh returned non-JSON output")

	noGh := prWatchFile(t, t.TempDir(), "")
	code, _, errOut = run(t, home, "pipeline", "run", noGh)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "gh not found on PATH (install GitHub CLI)")

	prState(t, gh, "pr_open.json")
	code, stdout, errOut := run(t, home, "pipeline", "run", file)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, lobsterOut(t, "pr_monitor_first"), stdout, "no failed run stored a state")

	kept, err := filepath.Glob(filepath.Join(home, "pipeline-state", "pr-watch-*", "github.pr_openclaw_openclaw_1152.json"))
	require.NoError(t, err)
	require.Len(t, kept, 1, "the state is kept in the workflow file's scope")
	require.NoError(t, os.WriteFile(kept[0], []byte("{torn"), 0o600))
	code, _, errOut = run(t, home, "pipeline", "run", file)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "stored state "+kept[0]+" is not JSON")
}

// TestWorkflowsRunBeforeAGateReportsOnce: a workflows.run ahead of an
// approve runs gh once and keeps the PR's state once; the approved run
// goes on with the item it reported, even though the PR changed while
// the gate waited, and the next run compares with the state the first
// one kept.
func TestWorkflowsRunBeforeAGateReportsOnce(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	gh := standInGh(t)
	file := prWatchFile(t, gh+string(os.PathListSeparator)+os.Getenv("PATH"), " | approve --prompt send?")
	gated := func(fixture string) (output string) {
		t.Helper()
		prState(t, gh, fixture)
		code, stdout, errOut := run(t, home, "pipeline", "run", "--mode", "tool", file, "--args-json", `{"name":"github.pr.monitor.notify"}`)
		require.Equal(t, 0, code, errOut)
		var env struct{ RequiresApproval struct{ ApprovalID string } }
		require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
		require.NotEmpty(t, env.RequiresApproval.ApprovalID, stdout)
		prState(t, gh, "pr_approved.json") // the PR moves on while the gate waits
		code, stdout, errOut = run(t, home, "pipeline", "resume", "--mode", "tool", "--id", env.RequiresApproval.ApprovalID, "--approve", "yes")
		require.Equal(t, 0, code, errOut)
		var done struct{ Output json.RawMessage }
		require.NoError(t, json.Unmarshal([]byte(stdout), &done), stdout)
		return string(done.Output)
	}
	first := gated("pr_open.json")
	var items []struct {
		PR      struct{ UpdatedAt string }
		Summary struct{ ChangedFields []string }
	}
	require.NoError(t, json.Unmarshal([]byte(first), &items), first)
	require.Len(t, items, 1)
	require.Equal(t, "2026-01-02T03:04:05Z", items[0].PR.UpdatedAt, "the item reported before the gate goes on")
	require.Len(t, items[0].Summary.ChangedFields, 10, "a first run: every field is new")
	calls, err := os.ReadFile(filepath.Join(gh, "calls"))
	require.NoError(t, err)
	require.Equal(t, "call\n", string(calls), "gh ran once for the gated run")

	require.JSONEq(t, lobsterOut(t, "pr_notify_changed"), gated("pr_approved.json"), "the first run kept pr_open's state")
}
