package pipeline_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// runActive runs every active task of flow flowID, again and again, until
// none is active.
func runActive(t *testing.T, h *sdktest.Harness, c *controller, flowID string) {
	t.Helper()
	for range 100 {
		var act []*sdk.Task
		for _, task := range h.Tasks(flowID) {
			if task.Status.Active() {
				act = append(act, task)
			}
		}
		if len(act) == 0 {
			return
		}
		for _, task := range act {
			c.runner.run(t, h, task)
		}
	}
	t.Fatalf("flow %s still has active tasks after 100 rounds", flowID)
}

// TestPipelinesInBranchesAndLoops runs pipeline: branches of a parallel
// step and pipeline: sub-steps of a for_each, with refs into them (stdin,
// $item.json), conditions on their results, and refs out of them; each
// exec stage is a task keyed by its branch or sub-step, stage and item.
func TestPipelinesInBranchesAndLoops(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "nested-pipes.lobster", nil)
		c.runner.next(t, h, f.ID) // list
		require.ElementsMatch(t, []string{"par/ext/stage0", "par/sh"}, activeLabels(h, f.ID), "the pure branch needs no task; the others start at once")
		runActive(t, h, c, f.ID)

		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		keys := map[string]bool{}
		for _, task := range h.Tasks(f.ID) {
			keys[task.IdempotencyKey] = true
		}
		for _, k := range []string{":par/ext/stage0:0", ":par/sh:0", ":loop/double/stage0:0", ":loop/double/stage0:1", ":loop/double/stage0:2"} {
			require.True(t, keys[f.ID+k], "task %s", k)
		}
		st, top := readState(t, f)
		reps, err := sdk.StageReportsOf(f)
		require.NoError(t, err)
		require.Contains(t, string(top["stages"]), `"loop/double[2]"`)
		require.Equal(t, sdk.StageReport{At: -1, Stages: []sdk.StageCount{{Name: "where", Items: ptr(2)}, {Name: "map", Items: ptr(2)}}}, reps["par/big"])
		require.Equal(t, sdk.StageReport{At: -1, Stages: []sdk.StageCount{{Name: "exec", Items: ptr(1)}, {Name: "map", Items: ptr(1)}}}, reps["loop/double[0]"])
		require.JSONEq(t, `{"id":"big","stdout":"[2,3]","json":[2,3]}`, string(st.Results["big"]))
		require.JSONEq(t, `{"id":"ext","stdout":"5","json":5}`, string(st.Results["ext"]))
		require.JSONEq(t, `{"big":[2,3],"ext":5}`, jsonOf(t, mustJSON(t, st.Results["par"])["json"]), "sh printed no JSON, so it has no key")
		require.JSONEq(t, `[{"item":{"n":1},"index":0,"double":1},{"item":{"n":2},"index":1,"double":2,"tag":"two:2"},{"item":{"n":3},"index":2,"double":3}]`,
			jsonOf(t, mustJSON(t, st.Results["loop"])["json"]))
		require.JSONEq(t, `{"big":[2,3],"ext":5}`, jsonOf(t, mustJSON(t, st.Results["after"])["json"]))
		require.JSONEq(t, `[{"big":[2,3],"ext":5}]`, string(st.Output), "a command step reads the pipeline's json")
	})
}

// TestPipelineBranchAndLoopFailures: a failing exec stage fails its
// branch, which on_error: continue records; approve and ask in a branch or
// loop pipeline fail with Lobster's messages instead of parking the flow.
func TestPipelineBranchAndLoopFailures(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "nested-pipes-fail.lobster", nil)
		runActive(t, h, c, f.ID)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		// The test runner reports every failure as exit code 1.
		require.JSONEq(t, `{"id":"par","error":true,"errorMessage":"Parallel branch failed: exec failed (1): broken"}`, string(st.Results["par"]))
		require.JSONEq(t, `{"id":"gated","error":true,"errorMessage":"Parallel branch failed: Workflow step g halted for approval inside pipeline stage approve. Use a separate approval step in the workflow file."}`, string(st.Results["gated"]))
		require.JSONEq(t, `{"id":"loop","error":true,"errorMessage":"for_each item 0, step ask: requestInput is not supported in this pipeline context"}`, string(st.Results["loop"]))
	})
}

// mustJSON decodes a result as the state holds it.
func mustJSON(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, jsonUnmarshal(raw, &m))
	return m
}

func ptr(n int) *int { return &n }
