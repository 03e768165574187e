package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFlowShowListsPipelineStages: flow show lists a pipeline's stages
// with the items each produced and the gate that stopped it, in text and
// in --json; once the gate is approved, every stage has its count.
func TestFlowShowListsPipelineStages(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, stdout, errOut := run(t, home, "pipeline", "run", "--mode", "tool",
		`exec --json --shell "echo '[{\"n\":1},{\"n\":2},{\"n\":3}]'" | where n>1 | approve --prompt ok? | map --unwrap n`)
	require.Equal(t, 0, code, errOut)
	var env struct {
		FlowID           string
		RequiresApproval struct{ ApprovalID string }
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)

	code, stdout, errOut = run(t, home, "tasks", "flow", "show", env.FlowID)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "Pipeline stages:\n- pipeline: exec → 3 | where → 2 | approve (stopped here: waiting for approval) | map\n")

	code, stdout, errOut = run(t, home, "tasks", "flow", "show", "--json", env.FlowID)
	require.Equal(t, 0, code, errOut)
	var view struct {
		Stages map[string]struct {
			Stages []struct {
				Name  string
				Items *int
			}
			At      int
			Waiting string
		} `json:"pipeline_stages"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &view), stdout)
	rep := view.Stages["pipeline"]
	require.Equal(t, 2, rep.At)
	require.Equal(t, "approval", rep.Waiting)
	require.Equal(t, 3, *rep.Stages[0].Items)
	require.Nil(t, rep.Stages[3].Items, "map has not run")

	code, _, errOut = run(t, home, "pipeline", "resume", "--id", env.RequiresApproval.ApprovalID, "--approve", "yes")
	require.Equal(t, 0, code, errOut)
	code, stdout, errOut = run(t, home, "tasks", "flow", "show", env.FlowID)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "- pipeline: exec → 3 | where → 2 | approve → 2 | map → 2\n")
}

// TestFlowShowCountsStagesLeftOut: a pipeline of more stages than its
// report keeps lists the first ones and says how many it leaves out.
func TestFlowShowCountsStagesLeftOut(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, stdout, errOut := run(t, home, "pipeline", "run", "--mode", "tool", strings.TrimSuffix(strings.Repeat("head | ", 100), " | "))
	require.Equal(t, 0, code, errOut)
	var env struct{ FlowID string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &env), stdout)

	code, stdout, errOut = run(t, home, "tasks", "flow", "show", env.FlowID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `- pipeline: head → 0( \| head → 0)* \| … \d+ more\n`, stdout)
}
