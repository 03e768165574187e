package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
)

// bigOutputs is a workflow whose first five steps each print about
// 250 KB (under the per-step cap): together more than a flow's record
// can hold inline. Later steps read two of them back by reference.
const bigOutputs = `name: big-outputs
steps:
  - id: s1
    run: awk 'BEGIN { s = "x"; while (length(s) < 250000) s = s s; print substr(s, 1, 250000) }'
  - id: s2
    run: awk 'BEGIN { s = "x"; while (length(s) < 250000) s = s s; print substr(s, 1, 250000) }'
  - id: s3
    run: awk 'BEGIN { s = "x"; while (length(s) < 250000) s = s s; print substr(s, 1, 250000) }'
  - id: s4
    run: awk 'BEGIN { s = "x"; while (length(s) < 250000) s = s s; print substr(s, 1, 250000) }'
  - id: s5
    run: awk 'BEGIN { s = "y"; while (length(s) < 249000) s = s s; printf "{\"big\":\"%s\"}\n", substr(s, 1, 249000) }'
  - id: count
    stdin: $s1.stdout
    run: wc -c | tr -d ' '
  - id: countjson
    stdin: $s5.json.big
    run: wc -c | tr -d ' '
`

// A valid pipeline whose steps print a lot ends ok: outputs over the
// inline size stay in the tasks' log files, the state names them, and
// references read them back.
func TestPipelineBigStepOutputsSucceed(t *testing.T) {
	t.Parallel()
	wf := filepath.Join(t.TempDir(), "big.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(bigOutputs), 0o600))

	env, state := runBig(t, shortHome(t), wf)
	require.Equal(t, []any{249000.0}, env.Output, "$s5.json.big was read back from its file")
	require.Less(t, len(state), 64<<10, "the flow's state holds references, not the outputs")
	require.Contains(t, string(state), `"stdoutFile"`)
	require.Contains(t, string(state), `250001\n`, "$s1.stdout was read back from its file")
}

// pipeline validate refuses a workflow file over the documented size,
// as a usage error.
func TestPipelineValidateRefusesHugeFile(t *testing.T) {
	t.Parallel()
	wf := filepath.Join(t.TempDir(), "huge.lobster")
	body := "name: huge\nsteps:\n  - id: a\n    run: echo hi\n" + strings.Repeat("# padding padding padding\n", 7<<20/26)
	require.NoError(t, os.WriteFile(wf, []byte(body), 0o600))
	code, _, errOut := run(t, shortHome(t), "pipeline", "validate", wf)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "at most 262144 are allowed")
}

// A workflow whose output is large (four branches of 240 KB, about
// 1 MB together) ends ok: the output is kept in a file the state names,
// and pipeline run prints it whole. It used to fail the flow as too
// large for its state.
func TestPipelineLargeOutputIsKeptInAFile(t *testing.T) {
	t.Parallel()
	branch := `        - id: b%d
          run: awk 'BEGIN { s = "z"; while (length(s) < 240000) s = s s; printf "{\"v\":\"%%s\"}\n", substr(s, 1, 240000) }'
`
	wf := "name: wide\nsteps:\n  - id: wide\n    parallel:\n      branches:\n"
	for i := range 4 {
		wf += fmt.Sprintf(branch, i)
	}
	path := filepath.Join(t.TempDir(), "wide.lobster")
	require.NoError(t, os.WriteFile(path, []byte(wf), 0o600))
	home := shortHome(t)
	env, state := runBig(t, home, path)
	require.Len(t, env.Output, 1, "the output is the parallel step's json")
	branches := env.Output[0].(map[string]any)
	for i := range 4 {
		require.Len(t, branches[fmt.Sprintf("b%d", i)].(map[string]any)["v"], 240000)
	}
	require.NotContains(t, string(state), `"output_file"`, "the output is the flow's, not its state's")
	require.NotContains(t, string(state), `"output":`)
	out := flowOutput(t, home, env.FlowID)
	require.NotNil(t, out.File, "the output is kept outside the record")
	require.Empty(t, out.Value)
	require.NotEmpty(t, out.File.Path)
}

// flowOutput reads the output record of flow id, as flow show --json
// prints it.
func flowOutput(t *testing.T, home, id string) *sdk.Output {
	t.Helper()
	code, out, errOut := run(t, home, "tasks", "flow", "show", id, "--json")
	require.Equal(t, 0, code, errOut)
	var f sdk.Flow
	require.NoError(t, json.Unmarshal([]byte(out), &f))
	require.NotNil(t, f.Output, "a succeeded pipeline flow has an output")
	return f.Output
}

// The state's bound holds only for what the controller writes: a state
// too large because of what the caller put in it (here an 800 KB arg)
// fails the flow with a message that says so, instead of leaving it
// blocked.
func TestPipelineStateTooLargeFails(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "args.lobster")
	require.NoError(t, os.WriteFile(path, []byte("name: args\nargs:\n  blob:\n    default: x\nsteps:\n  - id: a\n    run: echo hi\n"), 0o600))
	home := shortHome(t)
	blob, _ := json.Marshal(map[string]string{"blob": strings.Repeat("b", 800<<10)})
	code, stdout, errOut := run(t, home, "pipeline", "run", path, "--args-json", string(blob), "--mode", "tool")
	require.NotEqual(t, 0, code, stdout)
	require.Contains(t, stdout+errOut, "over the 786432 a flow's state may hold")
	require.Contains(t, stdout+errOut, "its args, env and decisions are too large")

	code, out, _ := run(t, home, "tasks", "flow", "list", "--json")
	require.Equal(t, 0, code)
	require.Contains(t, out, `"status": "failed"`)
}

// runBig runs the workflow at path in tool mode, requires it to end ok,
// and returns its envelope and the flow's state, which must be small.
func runBig(t *testing.T, home, path string) (bigEnvelope, json.RawMessage) {
	t.Helper()
	code, stdout, errOut := run(t, home, "pipeline", "run", path, "--mode", "tool")
	require.Equal(t, 0, code, "%s%.2000s", errOut, stdout)
	var env bigEnvelope
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), "%.2000s", stdout)
	require.Equal(t, "ok", env.Status, "%.2000s", stdout)
	code, out, errOut := run(t, home, "tasks", "flow", "show", env.FlowID, "--json")
	require.Equal(t, 0, code, errOut)
	var f struct {
		Status string
		State  json.RawMessage
	}
	require.NoError(t, json.Unmarshal([]byte(out), &f))
	require.Equal(t, "succeeded", f.Status)
	require.Less(t, len(f.State), 768<<10-256<<10, "the flow's state stays within what the controller may write")
	return env, f.State
}

type bigEnvelope struct {
	Status string
	Output []any
	FlowID string `json:"flowId"`
}

// A for_each of ten items whose sub-step prints 200 KB each ends ok with
// all its rows (about 2 MB) in the output: its combined result and the
// output are kept in files, not copied into the state. It used to fail
// the flow as too large for its state.
func TestPipelineForEachBigItemsSucceed(t *testing.T) {
	t.Parallel()
	wf := `name: loop
steps:
  - id: loop
    for_each: '[0,1,2,3,4,5,6,7,8,9]'
    steps:
      - id: big
        run: awk 'BEGIN { s = "w"; while (length(s) < 200000) s = s s; printf "{\"i\":%d,\"v\":\"%s\"}\n", $item.stdout, substr(s, 1, 200000) }'
`
	path := filepath.Join(t.TempDir(), "loop.lobster")
	require.NoError(t, os.WriteFile(path, []byte(wf), 0o600))
	env, state := runBig(t, shortHome(t), path)
	require.Len(t, env.Output, 10)
	for i, row := range env.Output {
		big := row.(map[string]any)["big"].(map[string]any)
		require.Equal(t, float64(i), big["i"])
		require.Len(t, big["v"], 200000)
	}
	require.Contains(t, string(state), `"spilled"`, "the for_each result is kept in a file")
}

// Forty steps that each print just under the inline size, in JSON that
// takes six bytes a character to encode, end ok, and a later step reads
// them back: past the inline budget the results are kept in files.
// Together they used to take about 2 MB of state and fail the flow.
func TestPipelineManyInlineResultsSucceed(t *testing.T) {
	t.Parallel()
	path := writeSteps(t, 40, `awk 'BEGIN { s = "<"; while (length(s) < 4000) s = s s; printf "\"%s\"", substr(s, 1, 4000) }'`,
		"  - id: sum\n    run: 'echo $(( ${#LOBSTER_STEP_S0_JSON} + ${#LOBSTER_STEP_S20_JSON} + ${#LOBSTER_STEP_S39_JSON} ))'\n")
	env, state := runBig(t, shortHome(t), path)
	require.Equal(t, []any{float64(3 * 4000)}, env.Output, "the first, a middle and the last step's json were read back whole")
	require.Contains(t, string(state), `"spilled"`)
}

// pipeline validate refuses a workflow with more steps than a flow's
// state can hold the results of, saying what to do.
func TestPipelineValidateRefusesTooManySteps(t *testing.T) {
	t.Parallel()
	path := writeSteps(t, 5000, "echo", "")
	code, _, errOut := run(t, shortHome(t), "pipeline", "validate", path)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "has 5000 step results")
	require.Contains(t, errOut, "split it into smaller workflows")
}

// A parallel step whose branches print large JSON keeps its combined
// result in the state as a reference to the branches' results (which are
// in their tasks' log files), and computes it again for the steps after
// it. Its combined result used to be copied into the state whole, so four
// branches of 200 KB failed the flow as too large.
func TestPipelineCombinedResultIsKeptByReference(t *testing.T) {
	t.Parallel()
	branch := `        - id: b%d
          run: awk 'BEGIN { s = "z"; while (length(s) < 200000) s = s s; printf "{\"k\":\"b%d\",\"v\":\"%%s\"}\n", substr(s, 1, 200000) }'
`
	wf := "name: wide\nsteps:\n  - id: wide\n    parallel:\n      branches:\n"
	for i := range 4 {
		wf += fmt.Sprintf(branch, i, i)
	}
	wf += "  - id: after\n    run: echo $wide.json.b2.k\n"
	path := filepath.Join(t.TempDir(), "wide.lobster")
	require.NoError(t, os.WriteFile(path, []byte(wf), 0o600))
	env, state := runBig(t, shortHome(t), path)
	require.Len(t, env.Output, 1)
	require.Contains(t, env.Output[0], "b2", "$wide.json was computed again from the branches")
	require.Less(t, len(state), 64<<10, "the flow's state holds references, not the outputs")
	require.Contains(t, string(state), `"derived": true`)
}

// A workflow step whose sub-workflow's output is large keeps its result
// by reference too, and computes it again from the sub-workflow's step
// results for the steps after it.
func TestPipelineWorkflowResultIsKeptByReference(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sub := "name: sub\nsteps:\n  - id: big\n    run: awk 'BEGIN { s = \"q\"; while (length(s) < 20000) s = s s; printf \"{\\\"k\\\":\\\"inner\\\",\\\"v\\\":\\\"%s\\\"}\\n\", substr(s, 1, 20000) }'\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "sub.lobster"), []byte(sub), 0o600))
	top := "name: top\nsteps:\n  - id: w\n    workflow: sub.lobster\n  - id: after\n    run: echo $w.json.k\n"
	path := filepath.Join(dir, "top.lobster")
	require.NoError(t, os.WriteFile(path, []byte(top), 0o600))
	env, state := runBig(t, shortHome(t), path)
	require.Equal(t, []any{"inner\n"}, env.Output)
	require.Less(t, len(state), 16<<10, "the sub-workflow's output is not copied into the state")
	require.Contains(t, string(state), `"derived": true`)
}

// writeSteps writes a workflow of n steps s0…s<n-1> that each run cmd,
// followed by the steps in tail (YAML), and returns its path.
func writeSteps(t *testing.T, n int, cmd, tail string) string {
	t.Helper()
	var wf strings.Builder
	wf.WriteString("name: steps\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&wf, "  - id: s%d\n    run: %s\n", i, cmd)
	}
	wf.WriteString(tail)
	path := filepath.Join(t.TempDir(), "steps.lobster")
	require.NoError(t, os.WriteFile(path, []byte(wf.String()), 0o600))
	return path
}
