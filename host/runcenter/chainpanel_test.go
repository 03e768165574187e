package runcenter_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// usedTask adds a task to flow that ran and reported usage, as the
// runner records it: started, then its progress file's usage line.
func usedTask(t *testing.T, eng *engine.Engine, flow, label string, u sdk.Usage) *stored.Task {
	t.Helper()
	task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: flow, Label: label})
	require.NoError(t, err)
	_, err = eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	task, err = eng.RecordProgress(task.ID, engine.ProgressInput{From: 0, To: 80, Usage: &u})
	require.NoError(t, err)
	return task
}

// A continued chain's panel, on either run's page, links both runs,
// names the steps the continuation reused and reran, sums the tokens
// both runs reported and says why the first run failed; a flow alone in
// its chain with nothing reported has no panel.
func TestChainPanelOfAContinuedChain(t *testing.T) {
	t.Parallel()
	var src, succ, alone string
	s := startSeeded(t, func(eng *engine.Engine) {
		state, err := json.Marshal(map[string]any{sdk.PlanKey: sdk.Plan{Controller: "ctl@1", Nodes: []sdk.PlanNode{
			{ID: "fetch", Status: sdk.NodeSucceeded},
			{ID: "summarize", DependsOn: []string{"fetch"}, Status: sdk.NodeFailed},
			{ID: "publish", DependsOn: []string{"summarize"}},
		}}})
		require.NoError(t, err)
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "web", ControllerID: "ctl", Goal: "digest", State: state})
		require.NoError(t, err)
		task := usedTask(t, eng, f.ID, "summarize", sdk.Usage{InputTokens: 1000, OutputTokens: 200, Cost: 0.25, TokenReports: 1, CostReports: 1})
		one := 1
		_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskFailed, ExitCode: &one, Error: "exit 1"})
		require.NoError(t, err)
		f, err = eng.GetFlow(f.ID)
		require.NoError(t, err)
		f, err = eng.Fail(f.ID, f.Revision, engine.EndInput{BlockedSummary: "step summarize failed: <rate limited>"})
		require.NoError(t, err)
		next, _, err := eng.ContinueFlow(f.ID, sdk.ContinueRequest{ExpectedRevision: f.Revision, Reason: "the model was rate limited"})
		require.NoError(t, err)
		usedTask(t, eng, next.ID, "summarize", sdk.Usage{InputTokens: 300, OutputTokens: 50, TokenReports: 1})
		lone, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "web", ControllerID: "ctl", Goal: "lone"})
		require.NoError(t, err)
		src, succ, alone = f.ID, next.ID, lone.ID
	})

	for _, page := range []string{src, succ} {
		body := s.get("/flows/"+page, "")
		_, panel, ok := strings.Cut(body, `<section id="chain" class="card">`)
		require.True(t, ok, "the page of %s has a chain panel", page)
		panel, _, _ = strings.Cut(panel, `</section>`)
		require.Contains(t, panel, `<a href="/?chain=`+src+`"><code>`+src+`</code></a>`, "the chain's id, linked to its runs")
		require.Regexp(t, `<li data-run="`+src+`"><a href="/flows/`+src+`"><code>`+src+`</code></a> <span class="st st-failed">failed</span> <small>revision \d+ · 1200 tokens`, panel)
		require.Contains(t, panel, `<li data-run="`+succ+`"><a href="/flows/`+succ+`"><code>`+succ+`</code></a>`)
		require.Regexp(t, regexp.QuoteMeta(`<li data-run="`+page+`">`)+`[^\n]*<b>this run</b>`, panel, "the page's own run is marked")
		require.Contains(t, panel, `at revision `)
		require.Contains(t, panel, `<dd class="chain-reused"><code>fetch</code></dd>`)
		require.Contains(t, panel, `<dd class="chain-rerun"><code>summarize</code>, <code>publish</code></dd>`)
		require.Contains(t, panel, `<dd class="chain-usage">1550 tokens (1300 in, 250 out) from 2 reports · cost 0.25 from 1 reports <small>over every run</small></dd>`)
		require.Contains(t, panel, `<dd class="problem">step summarize failed: &lt;rate limited&gt;</dd>`, "the first failure, as text")
		require.Contains(t, panel, "the model was rate limited")
	}
	require.NotContains(t, s.get("/flows/"+alone, ""), `id="chain"`, "a flow alone with nothing to show has no panel")
}
