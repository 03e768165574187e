package pipeline_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// phases is each node of flow f's plan with its phase.
func phases(t *testing.T, f *sdk.Flow) map[string]sdk.NodePhase {
	t.Helper()
	p, err := flowrule.PlanOf(f)
	require.NoError(t, err, "the flow has a plan while it runs")
	out := map[string]sdk.NodePhase{}
	for _, n := range p.Nodes {
		out[n.ID] = n.Phase
	}
	return out
}

// node is node id of flow f's plan.
func node(t *testing.T, f *sdk.Flow, id string) sdk.PlanNode {
	t.Helper()
	p, err := flowrule.PlanOf(f)
	require.NoError(t, err)
	for _, n := range p.Nodes {
		if n.ID == id {
			return n
		}
	}
	t.Fatalf("the plan has no node %s", id)
	return sdk.PlanNode{}
}

// The plan shows where each step stands in every write the run makes: a
// step running while its task runs, a skipped one with its condition, a
// loop's item counts, a gate waiting, and, when the run fails, the step
// it failed at as failed, not pending. Each node carries what pipeline
// graph draws of it.
func TestPlanShowsEachStepAsTheRunGoes(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "plan-view.lobster", nil)
		f = h.Flow(f.ID)
		require.Equal(t, map[string]sdk.NodePhase{"build": "running", "lint": "pending", "each": "pending", "review": "pending", "fan": "pending"}, phases(t, f))
		require.Equal(t, sdk.NodeView{Type: "run", Detail: "echo '[1,2,3]'", Phase: sdk.PhaseRunning}, node(t, f, "build").NodeView)

		c.runner.next(t, h, f.ID)
		f = h.Flow(f.ID)
		require.Equal(t, map[string]sdk.NodePhase{"build": "succeeded", "lint": "skipped", "each": "running", "review": "pending", "fan": "pending"}, phases(t, f))
		lint := node(t, f, "lint")
		require.Equal(t, "$build.json == 0", lint.Condition, "a skipped step keeps its condition")
		require.Equal(t, []sdk.NodeRef{{From: "build", Label: "when: $build.json == 0"}}, lint.Refs)
		each := node(t, f, "each")
		require.Equal(t, &sdk.NodeItems{Total: 3, Running: 3}, each.Items)
		require.Equal(t, []sdk.NodeRef{{From: "build", Label: "for_each"}}, each.Refs)

		for _, task := range h.Tasks(f.ID)[1:] {
			c.runner.run(t, h, task)
		}
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowWaiting, f.Status)
		require.Equal(t, map[string]sdk.NodePhase{"build": "succeeded", "lint": "skipped", "each": "succeeded", "review": "waiting", "fan": "pending"}, phases(t, f))
		require.Equal(t, &sdk.NodeItems{Total: 3, Done: 3}, node(t, f, "each").Items)
		require.Equal(t, "approval", node(t, f, "review").Type)

		f = decide(t, h, f.ID, "review", map[string]any{"approved": true, "by": "alice"})
		require.Equal(t, sdk.PhaseRunning, phases(t, f)["fan"])
		fan := node(t, f, "fan")
		require.Equal(t, []sdk.NodeBranch{{ID: "left", Phase: "running"}, {ID: "right", Phase: "running"}}, fan.Branches)
		for _, task := range h.Tasks(f.ID)[4:] {
			c.runner.run(t, h, task)
		}
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Equal(t, map[string]sdk.NodePhase{"build": "succeeded", "lint": "skipped", "each": "succeeded", "review": "succeeded", "fan": "failed"}, phases(t, f),
			"the step the run failed at is failed, not pending")
		require.Equal(t, []sdk.NodeBranch{{ID: "left", Phase: "succeeded"}, {ID: "right", Phase: "failed"}}, node(t, f, "fan").Branches)
		require.Empty(t, node(t, f, "fan").Status, "its status, which a continuation reads, still says it did not finish")
	})
}

// A continuation's plan shows the steps it reuses as reused, and the
// step it reruns running.
func TestPlanShowsReusedStepsOfAContinuation(t *testing.T) {
	t.Parallel()
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "continue.lobster", nil)
		for range 3 {
			c.runner.next(t, h, f.ID)
		}
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Equal(t, sdk.PhaseFailed, phases(t, f)["enrich"])
		succ, _, err := h.Host().Continue(t.Context(), f.ID, sdk.ContinueRequest{ExpectedRevision: f.Revision, Reason: "try again"})
		require.NoError(t, err)
		h.Drain(succ.ID)
		require.Equal(t, map[string]sdk.NodePhase{"fetch": "reused", "parse": "reused", "enrich": "running", "report": "pending", "notify": "pending"}, phases(t, h.Flow(succ.ID)))
	})
}

// What the plan shows of a step is kept by the workflow and the args it
// was drawn with (lookMemo), so two flows of one file run with other args
// each show their own, at every write.
func TestPlanShowsEachFlowsOwnArgs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "args.lobster")
	text := "name: args\nargs:\n  who:\n    default: nobody\nsteps:\n  - id: a\n    run: echo ${who}\n  - id: b\n    run: echo ${who} again\n"
	require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
	h := sdktest.New(t, pipeline.New())
	flows := map[string]string{}
	for _, who := range []string{"one", "two", "one"} {
		f := h.StartFlow("args", map[string]any{"file": file, "args": map[string]any{"who": who}, "cwd": dir})
		flows[f.ID] = who
	}
	r := &runner{}
	for range 2 {
		for id, who := range flows {
			f := h.Flow(id)
			require.Equal(t, "echo "+who, node(t, f, "a").Detail)
			require.Equal(t, "echo "+who+" again", node(t, f, "b").Detail)
			r.next(t, h, id)
		}
	}
}
