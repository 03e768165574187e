package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
	home := shortHome(t)
	wf := filepath.Join(t.TempDir(), "big.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(bigOutputs), 0o600))

	code, stdout, errOut := run(t, home, "pipeline", "run", wf, "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	var env struct {
		Status string
		Output []any
		FlowID string `json:"flowId"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.Equal(t, "ok", env.Status, stdout)
	require.Equal(t, []any{249000.0}, env.Output, "$s5.json.big was read back from its file")

	code, out, errOut := run(t, home, "tasks", "flow", "show", env.FlowID, "--json")
	require.Equal(t, 0, code, errOut)
	var f struct{ State json.RawMessage }
	require.NoError(t, json.Unmarshal([]byte(out), &f))
	require.Less(t, len(f.State), 64<<10, "the flow's state holds references, not the outputs")
	require.Contains(t, string(f.State), `"stdoutFile"`)
	require.Contains(t, string(f.State), `250001\n`, "$s1.stdout was read back from its file")
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

// A step whose combined result is too large for the flow's state fails
// the flow with a message that says which step and what to do, instead
// of leaving it blocked.
func TestPipelineStateTooLargeFails(t *testing.T) {
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
	code, stdout, errOut := run(t, home, "pipeline", "run", path, "--mode", "tool")
	require.NotEqual(t, 0, code, stdout)
	require.Contains(t, stdout+errOut, "over the 786432 a flow's state may hold")
	require.Contains(t, stdout+errOut, "the workflow's output is", "the parallel step's result is kept by reference; its copy in the output is what does not fit")

	code, out, _ := run(t, home, "tasks", "flow", "list", "--json")
	require.Equal(t, 0, code)
	require.Contains(t, out, `"status": "failed"`)
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
	home := shortHome(t)
	code, stdout, errOut := run(t, home, "pipeline", "run", path, "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	var env struct {
		Status string
		Output []any
		FlowID string `json:"flowId"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.Equal(t, "ok", env.Status, stdout)
	require.Len(t, env.Output, 1)
	require.Contains(t, env.Output[0], "b2", "$wide.json was computed again from the branches")

	code, out, errOut := run(t, home, "tasks", "flow", "show", env.FlowID, "--json")
	require.Equal(t, 0, code, errOut)
	var f struct{ State json.RawMessage }
	require.NoError(t, json.Unmarshal([]byte(out), &f))
	require.Less(t, len(f.State), 64<<10, "the flow's state holds references, not the outputs")
	require.Contains(t, string(f.State), `"derived": true`)
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
	home := shortHome(t)
	code, stdout, errOut := run(t, home, "pipeline", "run", path, "--mode", "tool")
	require.Equal(t, 0, code, errOut)
	var env struct {
		Status string
		Output []any
		FlowID string `json:"flowId"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)
	require.Equal(t, []any{"inner\n"}, env.Output, stdout)
	code, out, errOut := run(t, home, "tasks", "flow", "show", env.FlowID, "--json")
	require.Equal(t, 0, code, errOut)
	var f struct{ State json.RawMessage }
	require.NoError(t, json.Unmarshal([]byte(out), &f))
	require.Less(t, len(f.State), 16<<10, "the sub-workflow's output is not copied into the state")
	require.Contains(t, string(f.State), `"derived": true`)
}
