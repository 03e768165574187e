package flows_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

// lobsterGolden reads what real Lobster printed for a case of
// testdata/lobster (see capture.sh there).
func lobsterGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "lobster", name))
	require.NoError(t, err)
	return string(b)
}

// TestWorkflowsListMatchesLobsterBytes compares workflows.list with what
// real Lobster printed: the two recipes, each with its args schema and
// example, keys in Lobster's order.
func TestWorkflowsListMatchesLobsterBytes(t *testing.T) {
	t.Parallel()
	stages, err := flows.ParsePipeline("workflows.list")
	require.NoError(t, err)
	res, err := flows.RunPipeline(context.Background(), stages, 0, []any{"drained"}, flows.Builtins(), nil)
	require.NoError(t, err)
	require.Equal(t, lobsterGolden(t, "workflows_list.golden"), flows.StringifyIndent(res.Items, "  ")+"\n")
}

// TestPRMonitorMatchesLobsterBytes replays capture.sh's sequence of
// workflows.run stages (a first run, the same PR state again with and
// without changesOnly, the notify recipe unchanged and then changed, and
// a change back with summaryOnly) over the same gh fixtures and one kept
// state, and compares each item with real Lobster's bytes, and the gh
// arguments with the ones Lobster ran gh with.
func TestPRMonitorMatchesLobsterBytes(t *testing.T) {
	t.Parallel()
	const args = `--args-json '{"repo":"openclaw/openclaw","pr":1152`
	var kept any
	for _, c := range []struct{ fixture, stage, golden string }{
		{"pr_open.json", "--name github.pr.monitor " + args + "}'", "pr_monitor_first"},
		{"pr_open.json", "--name github.pr.monitor " + args + "}'", "pr_monitor_unchanged"},
		{"pr_open.json", "--name github.pr.monitor " + args + `,"changesOnly":true}'`, "pr_monitor_changes_only"},
		{"pr_open.json", "github.pr.monitor.notify " + args + "}'", "pr_notify_unchanged"},
		{"pr_approved.json", "--name github.pr.monitor.notify " + args + "}'", "pr_notify_changed"},
		{"pr_open.json", "--name github.pr.monitor " + args + `,"summaryOnly":true}'`, "pr_monitor_summary_only"},
	} {
		stages, err := flows.ParsePipeline("workflows.run " + c.stage)
		require.NoError(t, err)
		w, err := flows.ParseWorkflowRun(stages[0].Args)
		require.NoError(t, err, c.golden)
		require.Equal(t, "github.pr:openclaw/openclaw#1152", w.Key)
		require.Equal(t, lobsterGolden(t, "gh_argv.golden"), strings.Join(w.GhArgs, "\n")+"\n")
		current, err := flows.ParseGhOutput(lobsterGolden(t, c.fixture))
		require.NoError(t, err)
		item, err := w.Output(kept, current, flows.StateChanged(kept, current))
		require.NoError(t, err)
		require.Equal(t, lobsterGolden(t, c.golden+".golden"), flows.StringifyIndent([]any{item}, "  ")+"\n", c.golden)
		kept = current
	}
}

// TestPRStateComparedWithSortedKeys: gh printing the same fields in
// another order is no change, as Lobster compares the kept state with
// its keys sorted; a changed nested value is one.
func TestPRStateComparedWithSortedKeys(t *testing.T) {
	t.Parallel()
	a, err := flows.ParseGhOutput(`{"b":1,"a":{"y":2,"x":[1,{"q":1,"p":2}]}}`)
	require.NoError(t, err)
	b, err := flows.ParseGhOutput(" \n{\"a\":{\"x\":[1,{\"p\":2,\"q\":1}],\"y\":2},\"b\":1}\n")
	require.NoError(t, err)
	require.False(t, flows.StateChanged(a, b))
	c, err := flows.ParseGhOutput(`{"a":{"x":[1,{"p":3,"q":1}],"y":2},"b":1}`)
	require.NoError(t, err)
	require.True(t, flows.StateChanged(a, c))
	require.True(t, flows.StateChanged(nil, a), "nothing kept is a change")
}

// TestWorkflowsRunRefusesWithLobstersMessages: each bad stage is refused
// with the message Lobster gives, before gh would run.
func TestWorkflowsRunRefusesWithLobstersMessages(t *testing.T) {
	t.Parallel()
	for stage, want := range map[string]string{
		"workflows.run":                                                              "workflows.run requires --name",
		"workflows.run --name=":                                                      "workflows.run requires --name",
		"workflows.run --name nope":                                                  "Unknown workflow: nope",
		"workflows.run --name":                                                       "Unknown workflow: true",
		"workflows.run github.pr.monitor --args-json '{bad'":                         "workflows.run --args-json must be valid JSON",
		"workflows.run github.pr.monitor --args-json null":                           "Cannot read properties of null (reading 'repo')",
		"workflows.run github.pr.monitor.notify --args-json null":                    "github.pr.monitor requires args.repo and args.pr",
		`workflows.run github.pr.monitor --args-json '{"repo":"a/b"}'`:               "github.pr.monitor requires args.repo and args.pr",
		`workflows.run github.pr.monitor.notify --args-json '{"pr":0,"repo":"a/b"}'`: "github.pr.monitor requires args.repo and args.pr",
		"workflows.run github.pr.monitor":                                            "github.pr.monitor requires args.repo and args.pr",
	} {
		stages, err := flows.ParsePipeline(stage)
		require.NoError(t, err)
		_, err = flows.ParseWorkflowRun(stages[0].Args)
		require.EqualError(t, err, want, stage)
	}
}

// TestWorkflowsRunKeyAndGhErrors: args.key replaces the default key, pr
// may be a string, and gh's failures read as Lobster's.
func TestWorkflowsRunKeyAndGhErrors(t *testing.T) {
	t.Parallel()
	stages, err := flows.ParsePipeline(`workflows.run --name github.pr.monitor --args-json '{"repo":"o/r","pr":"7","key":"mine"}'`)
	require.NoError(t, err)
	w, err := flows.ParseWorkflowRun(stages[0].Args)
	require.NoError(t, err)
	require.Equal(t, "mine", w.Key)
	require.Equal(t, []string{"pr", "view", "7", "--repo", "o/r", "--json", "number,title,url,state,isDraft,mergeable,reviewDecision,author,baseRefName,headRefName,updatedAt"}, w.GhArgs)
	item, err := w.Output(nil, "not an object", true)
	require.NoError(t, err)
	require.Equal(t, `{"kind":"github.pr.monitor","repo":"o/r","prNumber":7,"key":"mine","changed":true,"summary":{"changedFields":[],"changes":{}},"prSnapshot":"not an object"}`, flows.Stringify(item))

	_, err = flows.ParseGhOutput("no json")
	require.EqualError(t, err, "gh returned non-JSON output")
	require.EqualError(t, flows.GhFailed("4", "\n GraphQL: no such PR \n"), "gh failed (4): GraphQL: no such PR")
	require.EqualError(t, flows.ErrGhNotFound, "gh not found on PATH (install GitHub CLI)")
}
