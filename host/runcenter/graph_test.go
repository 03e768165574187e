package runcenter_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// graphNodes is each node of the step graph in page with its phase, as
// data-node and data-phase say.
func graphNodes(page string) map[string]string {
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`<g class="gn[^"]*" data-node="([^"]+)" data-phase="([^"]+)">`).FindAllStringSubmatch(page, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// seededPlan is a site with one failed flow whose state holds plan, as
// the pipeline controller keeps it, and a finished task for each label
// (failed for the last), started and ended a second apart.
func seededPlan(t *testing.T, plan sdk.Plan, labels ...string) (*site, string) {
	t.Helper()
	var id string
	s := startSeeded(t, func(eng *engine.Engine) {
		state, err := json.Marshal(map[string]any{sdk.PlanKey: plan})
		require.NoError(t, err)
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "web", ControllerID: "ctl", Goal: "graph", State: state, AllowUnknownController: true})
		require.NoError(t, err)
		for i, label := range labels {
			task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Label: label})
			require.NoError(t, err)
			_, err = eng.StartTask(task.ID, engine.StartInput{})
			require.NoError(t, err)
			status := sdk.TaskSucceeded
			if i == len(labels)-1 {
				status = sdk.TaskFailed
			}
			_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: status})
			require.NoError(t, err)
		}
		f, err = eng.GetFlow(f.ID)
		require.NoError(t, err)
		_, err = eng.Fail(f.ID, f.Revision, engine.EndInput{CurrentStep: "check", BlockedSummary: "step check failed"})
		require.NoError(t, err)
		id = f.ID
	})
	return s, id
}

// The flow page draws the step graph of the flow's plan in its HTML,
// readable with JavaScript off: a node per step coloured by phase, a
// skipped step with the condition that skipped it, a for_each with its
// item counts, a parallel's branches side by side, a reused step, the
// failed step failed (in the Steps strip too, where it read pending),
// and each node that ran a plain link to its task's card, with its
// timing on hover. Text from the workflow is escaped.
func TestFlowPageDrawsTheStepGraph(t *testing.T) {
	t.Parallel()
	view := func(typ, detail string, phase sdk.NodePhase) sdk.NodeView {
		return sdk.NodeView{Type: typ, Detail: detail, Phase: phase}
	}
	lint := view("run", "echo never", sdk.PhaseSkipped)
	lint.Condition, lint.Refs = "$build.json == 0", []sdk.NodeRef{{From: "build", Label: "when: $build.json == 0"}}
	each := view("for_each", "$build.json", sdk.PhaseSucceeded)
	each.Items, each.Refs = &sdk.NodeItems{Total: 3, Done: 3}, []sdk.NodeRef{{From: "build", Label: "for_each"}}
	fan := view("parallel", "wait: all; left, right", sdk.PhaseSucceeded)
	fan.Branches = []sdk.NodeBranch{{ID: "left", Phase: sdk.PhaseSucceeded}, {ID: "right", Phase: sdk.PhaseSucceeded}}
	plan := sdk.Plan{Controller: "pipeline@0.1.0", Nodes: []sdk.PlanNode{
		{ID: "build", Status: sdk.NodeSucceeded, NodeView: view("run", "echo '[1,2,3]'", sdk.PhaseReused)},
		{ID: "lint", Status: sdk.NodeSucceeded, NodeView: lint},
		{ID: "each", Status: sdk.NodeSucceeded, NodeView: each},
		{ID: "fan", Status: sdk.NodeSucceeded, NodeView: fan},
		{ID: "check", NodeView: view("run", "echo '<script>alert(1)</script>'; exit 3", sdk.PhaseFailed)},
		{ID: "ship", NodeView: view("run", "echo shipped", "")},
	}}
	s, id := seededPlan(t, plan, "each/double[0]", "fan/left", "fan/right", "check")
	page := s.get("/flows/"+id, "")
	require.Equal(t, map[string]string{"build": "reused", "lint": "skipped", "each": "succeeded", "fan": "succeeded", "check": "failed", "ship": "pending"}, graphNodes(page))
	require.Contains(t, page, `<svg id="graph"`, "the graph is in the page's HTML")
	require.Contains(t, page, `class="gn-when">when: $build.json == 0</text>`, "the skipped step shows its condition")
	require.Contains(t, page, `class="gn-items">3 items: 3 done, 0 failed, 0 running</text>`, "the for_each shows its item counts")
	require.Regexp(t, `data-branch="left" data-phase="succeeded" href="#task-[^"]+"`, page, "a branch links to its task")
	require.Regexp(t, `<a class="ph-failed" href="#task-[^"]+"><title>check \(run\): failed\nstarted [^\n]+\nended `, page, "the failed step links to its task, with its timing")
	require.Contains(t, page, `class="ge ge-ref"`, "refs are drawn dashed")
	require.NotContains(t, page, "<script>alert(1)", "workflow text is escaped")
	require.Contains(t, page, `<code>check</code> <span class="st st-failed">failed</span>`, "the Steps strip shows the failed step failed")
}

// A plan without views, as older records and other controllers keep
// it, is drawn by its ids: ended nodes by their status, the step the
// flow failed at failed.
func TestStepGraphOfAPlanWithoutViews(t *testing.T) {
	t.Parallel()
	s, id := seededPlan(t, sdk.Plan{Nodes: []sdk.PlanNode{{ID: "build", Status: sdk.NodeSucceeded}, {ID: "check"}, {ID: "ship"}}}, "check")
	page := s.get("/flows/"+id, "")
	require.Equal(t, map[string]string{"build": "succeeded", "check": "failed", "ship": "pending"}, graphNodes(page))
}
