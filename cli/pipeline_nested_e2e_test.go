package cli_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPipelineStepsInBranchesAndLoopsEndToEnd runs a workflow file with
// pipeline: branches and for_each sub-steps through a gateway hosted by
// the command and the real pipeline plugin process, and reads Lobster's
// envelope.
func TestPipelineStepsInBranchesAndLoopsEndToEnd(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, stdout, errOut := run(t, home, "pipeline", "run", "--mode", "tool", "../plugins/pipeline/testdata/nested-pipes.lobster")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `{"protocolVersion":1,"ok":true,"status":"ok","output":[{"big":[2,3],"ext":5}],"requiresApproval":null,"requiresInput":null}`, withoutFlowID(t, stdout))

	code, stdout, errOut = run(t, home, "pipeline", "run", "--mode", "tool", "../plugins/pipeline/testdata/nested-pipes-fail.lobster")
	require.Equal(t, 0, code, errOut)
	require.JSONEq(t, `{"protocolVersion":1,"ok":true,"status":"ok","output":["Parallel branch failed: exec failed (3): broken|Parallel branch failed: Workflow step g halted for approval inside pipeline stage approve. Use a separate approval step in the workflow file.|for_each item 0, step ask: requestInput is not supported in this pipeline context"],"requiresApproval":null,"requiresInput":null}`, withoutFlowID(t, stdout))
}

// TestExecFailureNamesTheProgram: a program that fails with no output is
// named in the failure, as Lobster names it, not the runner's account.
func TestExecFailureNamesTheProgram(t *testing.T) {
	t.Parallel()
	code, stdout, _ := run(t, shortHome(t), "pipeline", "run", "--mode", "tool", "exec false")
	require.Equal(t, 1, code)
	require.Contains(t, stdout, `"message": "step pipeline failed: exec failed (1): false"`)
}

// withoutFlowID is a tool envelope without its flowId, which differs from
// run to run.
func withoutFlowID(t *testing.T, envelope string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(envelope), &m), envelope)
	require.NotEmpty(t, m["flowId"])
	delete(m, "flowId")
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}
