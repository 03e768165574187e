package flows_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
)

func load(t *testing.T, path string) *flows.Workflow {
	t.Helper()
	wf, err := flows.Load(filepath.Join("testdata", path))
	require.NoError(t, err)
	return wf
}

func TestLoadArgsEnv(t *testing.T) {
	t.Parallel()
	wf := load(t, "compat/args_env.lobster")
	require.Equal(t, "args-env", wf.Name)
	require.Equal(t, "Args, env and cwd as the reference describes them.", wf.Description)
	opts := flows.NewObject(1)
	opts.Set("deep", true)
	require.Equal(t, []flows.Arg{
		{Name: "user-id", Default: "u-42", HasDefault: true, Description: "who"},
		{Name: "count", Default: 3.0, HasDefault: true},
		{Name: "tags", Default: []any{"a", "b"}, HasDefault: true},
		{Name: "opts", Default: opts, HasDefault: true},
		{Name: "required_no_default", Description: "absent unless provided"},
	}, wf.Args)
	// Non-string env values are ignored, as in the reference.
	require.Equal(t, map[string]string{"GREETING": "hello ${user-id}", "FROM_STEP": "$first.stdout"}, wf.Env)
	require.Equal(t, "/tmp/${user-id}", wf.Cwd)

	args := flows.ResolveArgs(wf, map[string]any{"count": 5.0, "extra": "x"})
	require.Equal(t, map[string]any{
		"user-id": "u-42", "count": 5.0, "tags": []any{"a", "b"},
		"opts": opts, "extra": "x",
	}, args)

	s := &wf.Steps[0]
	require.Equal(t, "echo u-42 5", flows.ResolveTemplate(s.Run, args, nil))
	require.Equal(t, "/tmp/u-42", flows.StepCwd(args, wf.Cwd))
	require.Equal(t, "./sub/u-42", flows.StepCwd(args, wf.Cwd, s.Cwd))

	results := map[string]flows.StepResult{"first": flows.ShellResult("first", "u-42 5\n")}
	env := flows.StepEnv(args, results, wf.Env, s.Env)
	require.Equal(t, "step wins", env["GREETING"])
	require.Equal(t, "u-42 5\n", env["FROM_STEP"])
	// §4 / §19.2: env values are not shell-expanded and $NAME is no step ref.
	require.Equal(t, "$LOBSTER_ARG_TEXT", env["LOBSTER_ARG_TEXT"+"_NOT_SET"]+env["LITERAL"])
	require.Equal(t, "u-42", env["LOBSTER_ARG_USER_ID"])
	require.Equal(t, "5", env["LOBSTER_ARG_COUNT"])
	require.Equal(t, "a,b", env["LOBSTER_ARG_TAGS"])
	require.Equal(t, "[object Object]", env["LOBSTER_ARG_OPTS"])
	require.JSONEq(t, `{"user-id":"u-42","count":5,"tags":["a","b"],"opts":{"deep":true},"extra":"x"}`, env["LOBSTER_ARGS_JSON"])
}

func TestArgEnvName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"user-id":        "LOBSTER_ARG_USER_ID",
		"__edge__key__":  "LOBSTER_ARG_EDGE_KEY",
		" spaced name ":  "LOBSTER_ARG_SPACED_NAME",
		"a.b/c":          "LOBSTER_ARG_A_B_C",
		"x1":             "LOBSTER_ARG_X1",
		"---":            "",
		"":               "",
		"mixedCase_Name": "LOBSTER_ARG_MIXEDCASE_NAME",
	} {
		require.Equal(t, want, flows.ArgEnvName(in), in)
	}
	env := flows.ArgsEnv(map[string]any{"---": "skipped", "n": nil, "f": 1.5, "b": false})
	require.Equal(t, map[string]string{
		"LOBSTER_ARGS_JSON": `{"---":"skipped","b":false,"f":1.5,"n":null}`,
		"LOBSTER_ARG_N":     "null",
		"LOBSTER_ARG_F":     "1.5",
		"LOBSTER_ARG_B":     "false",
	}, env)
	require.Equal(t, []string{"A=1", "B=2"}, flows.EnvList(map[string]string{"B": "2", "A": "1"}))
}

func TestLoadAllKeys(t *testing.T) {
	t.Parallel()
	wf := load(t, "compat/all_keys.yaml")
	require.Equal(t, &flows.CostLimit{MaxUSD: 1.5, Action: "stop"}, wf.CostLimit)
	byID := map[string]*flows.Step{}
	for i := range wf.Steps {
		byID[wf.Steps[i].ID] = &wf.Steps[i]
	}

	fetch := byID["fetch"]
	require.Equal(t, "curl https://example.com", fetch.Run, "command: is an alias of run:")
	require.Equal(t, 5000, fetch.TimeoutMs)
	require.Equal(t, "continue", fetch.OnError)
	require.Equal(t, flows.Retry{Max: 3, Backoff: "exponential", DelayMs: 10, MaxDelayMs: 100, Jitter: true}, fetch.Retry)
	require.Equal(t, "run", fetch.Kind())
	require.Equal(t, 6, fetch.Line)

	require.Equal(t, "echo run-wins", byID["both"].Run, "run wins over command")
	require.Equal(t, flows.DefaultRetry(), byID["both"].Retry)
	require.Equal(t, "stop", byID["both"].OnError)

	fan := byID["fan"]
	require.Equal(t, "parallel", fan.Kind())
	require.Equal(t, "any", fan.Parallel.Wait)
	require.Equal(t, 2000, fan.Parallel.TimeoutMs)
	require.Len(t, fan.Parallel.Branches, 2)
	left := fan.Parallel.Branches[0]
	require.Equal(t, "left", left.ID)
	require.Equal(t, "echo left", left.Run)
	require.Equal(t, map[string]string{"SIDE": "left"}, left.Env)
	require.Equal(t, "/tmp", left.Cwd)
	require.Equal(t, "$fetch.stdout", left.Stdin)
	require.Equal(t, "echo right", fan.Parallel.Branches[1].Run)

	loop := byID["loop"]
	require.Equal(t, "for_each", loop.Kind())
	require.Equal(t, "$fetch.json.items", loop.ForEach.Expr)
	require.Equal(t, "it", loop.ForEach.ItemVar)
	require.Equal(t, "i", loop.ForEach.IndexVar)
	require.Equal(t, 2, loop.ForEach.BatchSize)
	require.Equal(t, 5.0, loop.ForEach.PauseMs)
	require.Equal(t, []string{"show", "again"}, []string{loop.ForEach.Steps[0].ID, loop.ForEach.Steps[1].ID})
	require.Equal(t, "$i.json > 0", loop.ForEach.Steps[1].When)

	child := byID["child"]
	require.Equal(t, "workflow", child.Kind())
	require.NotNil(t, child.Sub)
	require.Equal(t, "hello", child.Sub.Steps[0].ID)
	results := map[string]flows.StepResult{"fetch": flows.ShellResult("fetch", `{"name":"ann","items":[1,2]}`)}
	require.Equal(t, map[string]any{"who": "ann", "n": 2.0}, flows.ResolveWorkflowArgs(child, nil, results))

	gate := byID["gate"]
	require.Equal(t, "approval", gate.Kind())
	yes := true
	require.Equal(t, &flows.Approval{
		Prompt: "Ship it?", Items: []any{1.0, 2.0}, HasItems: true, Preview: "short", HasPreview: true,
		InitiatedBy: "agent-1", RequiredApprover: "alice", RequireDifferentApprover: &yes,
	}, gate.Approval)
	require.Equal(t, "Approve plain_gate?", flows.ApprovalPrompt(byID["plain_gate"]))
	require.Equal(t, `{"literal":"value"}`, flows.Stringify(byID["plain_gate"].Stdin))
	require.Equal(t, "Really?", flows.ApprovalPrompt(byID["prompt_gate"]))
	require.Nil(t, byID["not_gate"].Approval, "approval: false is not a gate")

	ask := byID["ask"]
	require.Equal(t, "input", ask.Kind())
	require.Equal(t, "Review?", ask.Input.Prompt)
	require.Equal(t, `{"decision":"approve"}`, flows.Stringify(ask.Input.Defaults))
	require.NoError(t, flows.ValidateResponse("ask", ask.Input.ResponseSchema, map[string]any{"decision": "approve"}))
	require.EqualError(t, flows.ValidateResponse("ask", ask.Input.ResponseSchema, map[string]any{"decision": "maybe"}),
		"Workflow input step ask response failed schema validation at /decision: must be equal to one of the allowed values")

	after := byID["after"]
	require.Equal(t, "$ask.response.decision == approve && $gate.approved", after.When, "condition: is an alias of when:")
	require.Equal(t, "skip_rest", after.OnError)
	require.Equal(t, true, byID["both_conds"].When, "when wins over condition")
}

func TestLoadJSON(t *testing.T) {
	t.Parallel()
	wf := load(t, "compat/workflow.json")
	require.Equal(t, "json-form", wf.Name)
	require.Equal(t, "echo hello world", flows.ResolveTemplate(wf.Steps[0].Run, flows.ResolveArgs(wf, nil), nil))
	require.Equal(t, 10, wf.Steps[1].TimeoutMs)
	require.Equal(t, 6, wf.Steps[1].Line)
}

func TestParseInMemory(t *testing.T) {
	t.Parallel()
	wf, err := flows.Parse("mem.yaml", []byte("steps:\n  - id: a\n    workflow: child.yaml\n"))
	require.NoError(t, err)
	require.Nil(t, wf.Steps[0].Sub, "Parse does not load sub-workflows")

	// YAML 1.2: yes/no are strings, so approval: no is a prompt.
	wf, err = flows.Parse("mem.yaml", []byte("steps:\n  - id: a\n    run: echo\n    approval: no\n"))
	require.NoError(t, err)
	require.Equal(t, "no", wf.Steps[0].Approval.Prompt)

	_, err = flows.Parse("empty.yaml", nil)
	require.ErrorContains(t, err, "empty.yaml:0:0: Workflow file must be a JSON/YAML object")
}

func TestSeveralErrorsSorted(t *testing.T) {
	t.Parallel()
	_, err := flows.Parse("multi.yaml", []byte(strings.Join([]string{
		"steps:",
		"  - id: a",
		"    run: echo",
		"    on_error: nope",
		"    timeout_ms: 0",
		"  - id: a",
		"    run: echo",
	}, "\n")))
	var errs []*flows.Error
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *flows.Error
		require.True(t, errors.As(e, &fe))
		errs = append(errs, fe)
	}
	require.Len(t, errs, 3)
	require.Equal(t, []int{4, 5, 6}, []int{errs[0].Line, errs[1].Line, errs[2].Line})
	require.Equal(t, "steps[0].on_error", errs[0].Key)
	require.Equal(t, "multi.yaml:5:5: steps[0].timeout_ms: Workflow step a timeout_ms must be a positive integer between 1 and 2147483647", errs[1].Error())
}

func TestSubWorkflows(t *testing.T) {
	t.Parallel()
	wf := load(t, "sub/parent.lobster")
	require.NotNil(t, wf.Steps[0].Sub)
	require.Equal(t, "leaf", wf.Steps[0].Sub.Steps[0].Sub.Steps[0].ID)
	require.Nil(t, wf.Steps[1].Sub, "templated paths load at run time")

	abs, err := filepath.Abs("testdata/sub/parent.lobster")
	require.NoError(t, err)
	leaf, err := flows.LoadSub(wf, &wf.Steps[1], "leaf.json", []string{abs})
	require.NoError(t, err)
	require.Equal(t, "leaf", leaf.Steps[0].ID)

	_, err = flows.LoadSub(wf, &wf.Steps[1], "parent.lobster", []string{abs})
	require.ErrorContains(t, err, "Workflow step dynamic creates a cycle: ")
	require.ErrorContains(t, err, "parent.lobster is already being executed")
}

func TestSubWorkflowErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ file, want string }{
		{"cycle_a.lobster", "cycle_b.lobster:2:5: steps[0].workflow: Workflow step to_a creates a cycle: "},
		{"self.yaml", "self.yaml:2:5: steps[0].workflow: Workflow step me creates a cycle: "},
		{"missing.yaml", "missing.yaml:2:5: steps[0].workflow: Workflow step gone workflow file not found: "},
		{"bad_child_parent.yaml", "bad_child.yaml:4:5: steps[0].timeout_ms: Workflow step oops timeout_ms must be"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			_, err := flows.Load(filepath.Join("testdata", "sub", tt.file))
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestLoadFileErrors(t *testing.T) {
	t.Parallel()
	_, err := flows.Load("testdata/nope.lobster")
	require.ErrorContains(t, err, "cannot read workflow file")
	dir := t.TempDir()
	p := filepath.Join(dir, "wf.txt")
	require.NoError(t, os.WriteFile(p, []byte("steps: []"), 0o600))
	_, err = flows.Load(p)
	require.ErrorContains(t, err, "Workflow file must end in .lobster, .yaml, .yml, or .json")
	require.True(t, flows.IsWorkflowFile("X.YML"))
}

func TestGatesListsApprovalAndInputSteps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "g.lobster")
	require.NoError(t, os.WriteFile(p, []byte("name: g\nsteps:\n  - id: a\n    run: echo hi\n  - id: ok\n    approval: Go?\n  - id: ask\n    input:\n      prompt: Name?\n      responseSchema: {type: string}\n"), 0o600))
	wf, err := flows.Load(p)
	require.NoError(t, err)
	require.Equal(t, []string{"ok", "ask"}, wf.Gates())
	p2 := filepath.Join(dir, "n.lobster")
	require.NoError(t, os.WriteFile(p2, []byte("name: n\nsteps:\n  - id: a\n    run: echo hi\n"), 0o600))
	wf, err = flows.Load(p2)
	require.NoError(t, err)
	require.Empty(t, wf.Gates())
}
