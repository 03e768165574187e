package pipeline

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

func execCall(t *testing.T, stage string, items ...any) *flows.Call {
	t.Helper()
	stages, err := flows.ParsePipeline(stage)
	require.NoError(t, err)
	return &flows.Call{Items: items, Args: stages[0].Args}
}

func TestExecSpec(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stage string
		items []any
		want  sdk.TaskSpec
		err   string
	}{
		{stage: "exec ls -l 'a b'", want: sdk.TaskSpec{Argv: []string{"ls", "-l", "a b"}}},
		{stage: "exec --shell 'ls | wc -l'", want: sdk.TaskSpec{Shell: "ls | wc -l"}},
		// One positional with whitespace runs through the shell.
		{stage: "exec 'echo hi there'", want: sdk.TaskSpec{Shell: "echo hi there"}},
		// --shell takes the next token: the rest are arguments exec ignores.
		{stage: "exec --shell echo hi there", want: sdk.TaskSpec{Shell: "echo"}},
		{stage: "exec --json cat f", want: sdk.TaskSpec{Argv: []string{"cat", "f"}}},
		{stage: "exec --stdin raw cat", items: []any{"a", map[string]any{"k": 1.0}}, want: sdk.TaskSpec{Argv: []string{"cat"}, Input: "a\n{\"k\":1}"}},
		{stage: "exec --stdin json cat", items: []any{"a", 1.0}, want: sdk.TaskSpec{Argv: []string{"cat"}, Input: `["a",1]`}},
		{stage: "exec --stdin jsonl cat", items: []any{"a", 1.0}, want: sdk.TaskSpec{Argv: []string{"cat"}, Input: "\"a\"\n1\n"}},
		{stage: "exec cat", items: []any{"dropped"}, want: sdk.TaskSpec{Argv: []string{"cat"}}},
		{stage: "exec --stdin yaml cat", err: "exec --stdin must be raw, json, or jsonl (got yaml)"},
		{stage: "exec", err: "exec requires a command"},
	} {
		t.Run(tc.stage, func(t *testing.T) {
			t.Parallel()
			call := execCall(t, tc.stage, tc.items...)
			got, err := execSpec(call, call.Args)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// A value with spaces, resolved into "exec ${cmd}", stays one argv word:
// whether a lone argument is a shell line is asked of what the file wrote.
func TestExecSpecAsksTheWrittenWordsForAShellLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stage string
		want  sdk.TaskSpec
	}{
		{stage: "exec ${cmd}", want: sdk.TaskSpec{Argv: []string{"x; touch pwned"}}},
		{stage: `exec "echo ${cmd}"`, want: sdk.TaskSpec{Shell: "echo x; touch pwned"}},
		{stage: "exec --shell ${cmd}", want: sdk.TaskSpec{Shell: "x; touch pwned"}},
	} {
		written, err := flows.ParsePipeline(tc.stage)
		require.NoError(t, err)
		stages, err := flows.ResolveStages(written, map[string]any{"cmd": "x; touch pwned"}, nil)
		require.NoError(t, err)
		got, err := execSpec(&flows.Call{Args: stages[0].Args}, written[0].Args)
		require.NoError(t, err)
		require.Equal(t, tc.want, got, tc.stage)
	}
}

func TestExecOutputFailures(t *testing.T) {
	t.Parallel()
	code := func(n int) *int { return &n }
	s := &flows.Step{ID: "p"}
	shell := sdk.TaskSpec{Shell: "exit 5"}
	for _, tc := range []struct {
		name string
		task sdk.Task
		spec sdk.TaskSpec
		want string
	}{
		// With no output Lobster names only the program: sh for a shell line.
		{"no output", sdk.Task{Status: sdk.TaskFailed, ExitCode: code(5)}, shell, "exec failed (5): sh"},
		{"stdout", sdk.Task{Status: sdk.TaskFailed, ExitCode: code(1), Result: &sdk.Result{Stdout: "boom\n"}}, shell, "exec failed (1): boom"},
		{"argv program", sdk.Task{Status: sdk.TaskFailed, ExitCode: code(2)}, sdk.TaskSpec{Argv: []string{"false"}}, "exec failed (2): false"},
		// The runner's account of the exit is not the program's output.
		{"runner's error", sdk.Task{Status: sdk.TaskFailed, ExitCode: code(1), Errors: []string{"attempt 1: exit code 1"}}, sdk.TaskSpec{Argv: []string{"false"}}, "exec failed (1): false"},
		{"shell not found", sdk.Task{Status: sdk.TaskFailed, ExitCode: code(127)}, sdk.TaskSpec{Shell: "nope"}, "exec command not found: nope"},
		{"argv not found", sdk.Task{Status: sdk.TaskFailed, Errors: []string{`exec: "nope": executable file not found in $PATH`}}, sdk.TaskSpec{Argv: []string{"nope"}}, "exec command not found: nope"},
		{"timed out", sdk.Task{Status: sdk.TaskTimedOut}, shell, "Step 'p' timed out"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := execOutput(s.ID, s.TimeoutMs, &tc.task, tc.spec)
			require.EqualError(t, err, tc.want)
		})
	}
}

func TestExecItems(t *testing.T) {
	t.Parallel()
	items, err := execItems("a\r\n\n  \nb", false)
	require.NoError(t, err)
	require.Equal(t, []any{"a", "  ", "b"}, items, "CR stripped, empty lines dropped, blank ones kept")

	items, err = execItems(" [1,{\"k\":2}]\n", true)
	require.NoError(t, err)
	require.Equal(t, `[1,{"k":2}]`, flows.Stringify(items), "an array is spread")

	items, err = execItems("\n", true)
	require.NoError(t, err)
	require.Equal(t, []any{nil}, items, "empty output is null")

	_, err = execItems("x", true)
	require.ErrorContains(t, err, "exec --json could not parse stdout as JSON: ")
}

func TestPipelineResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		items    []any
		rendered string
		did      bool
		want     string
	}{
		{"strings joined", []any{"a", "b"}, "", false, `{"id":"p","stdout":"a\nb","json":["a","b"]}`},
		{"one string", []any{"a"}, "", false, `{"id":"p","stdout":"a","json":"a"}`},
		{"one object", []any{map[string]any{"k": 1.0}}, "", false, `{"id":"p","stdout":"{\"k\":1}","json":{"k":1}}`},
		{"mixed", []any{"a", 1.0}, "", false, `{"id":"p","stdout":"[\"a\",1]","json":["a",1]}`},
		{"none", nil, "", false, `{"id":"p","stdout":""}`},
		{"rendered", nil, "[\n  1\n]\n", true, `{"id":"p","stdout":"[\n  1\n]\n","json":[1],"rendered":true}`},
		{"rendered table", nil, "(no results)\n", true, `{"id":"p","stdout":"(no results)\n","rendered":true}`},
		{"rendered, then items", []any{"a"}, "[]\n", true, `{"id":"p","stdout":"[]\n","json":"a"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := pipelineResult("p", tc.items, tc.rendered, tc.did)
			b, err := res.MarshalJSON()
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(b))
		})
	}
}

func TestApprovePreview(t *testing.T) {
	t.Parallel()
	args := func(stage string) flows.StageArgs { return execCall(t, stage).Args }
	require.Equal(t, "a\nb", approvePreview([]any{"a", "b"}, args("approve")), "strings are joined")
	items := []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0}
	require.Equal(t, "[\n  1,\n  2,\n  3,\n  4,\n  5\n]", approvePreview(items, args("approve")), "the first 5 by default")
	require.Equal(t, "[\n  1,\n  2\n]", approvePreview(items, args("approve --limit 2")))
	require.Equal(t, "", approvePreview(nil, args("approve")))
}
