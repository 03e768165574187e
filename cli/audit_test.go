package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/audit"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/plugins"
	"github.com/flowgate/flowgate/sdk"
)

// seedAt writes records to home's store through an engine whose clock
// reads at, so that they look as old as the test needs.
func seedAt(t *testing.T, dir string, at time.Time, fn func(eng *engine.Engine)) {
	t.Helper()
	require.NoError(t, home.Ensure(dir))
	st, err := store.Open(filepath.Join(dir, home.DBFile), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	eng, err := engine.New(st, engine.Config{Now: func() time.Time { return at }})
	require.NoError(t, err)
	fn(eng)
}

// auditHome has a stale queued task (warn), a stuck running task
// (error), and a managed flow with no tasks whose flow.started was never
// delivered (missing_linked_tasks error, events_backlog warn).
func auditHome(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	seedAt(t, dir, time.Now().Add(-45*time.Minute), func(eng *engine.Engine) {
		_, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Label: "stuck", Status: sdk.TaskRunning})
		require.NoError(t, err)
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "orphaned"})
		require.NoError(t, err)
		_, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{Status: sdk.FlowRunning})
		require.NoError(t, err)
	})
	seedAt(t, dir, time.Now().Add(-15*time.Minute), func(eng *engine.Engine) {
		_, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Label: "waiting"})
		require.NoError(t, err)
	})
	return dir
}

func TestTasksAuditJSONShape(t *testing.T) {
	t.Parallel()
	dir := auditHome(t)
	code, out, errOut := run(t, dir, "tasks", "audit", "--json")
	require.Equal(t, 0, code, errOut)

	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	keys := func(m any) []string {
		var ks []string
		for k := range m.(map[string]any) {
			ks = append(ks, k)
		}
		return ks
	}
	require.ElementsMatch(t, []string{"count", "filtered_count", "displayed", "filters", "summary", "findings", "skipped"}, keys(doc))
	require.Equal(t, map[string]any{"severity": nil, "code": nil, "limit": nil}, doc["filters"])
	sum := doc["summary"].(map[string]any)
	require.ElementsMatch(t, []string{"total", "warnings", "errors", "by_code", "task_flows", "combined"}, keys(sum))
	require.ElementsMatch(t, []string{"total", "warnings", "errors", "by_code"}, keys(sum["task_flows"]))
	require.ElementsMatch(t, []string{"total", "errors", "warnings"}, keys(sum["combined"]))
	var taskCodes, flowCodes []string
	for _, c := range audit.TaskCodes() {
		taskCodes = append(taskCodes, string(c))
	}
	for _, c := range audit.FlowCodes() {
		flowCodes = append(flowCodes, string(c))
	}
	require.ElementsMatch(t, taskCodes, keys(sum["by_code"]), "every task code is counted, zeros included")
	require.ElementsMatch(t, flowCodes, keys(sum["task_flows"].(map[string]any)["by_code"]))
	for _, f := range doc["findings"].([]any) {
		fk := keys(f)
		require.Subset(t, fk, []string{"kind", "severity", "code", "detail", "age_ms", "status", "token"})
		require.True(t, strings.Contains(strings.Join(fk, " "), "task") || strings.Contains(strings.Join(fk, " "), "flow"))
	}
	require.Equal(t, []any{map[string]any{"code": "controller_unavailable", "reason": "no gateway runs, so the state of the controller plugins is unknown"}}, doc["skipped"])

	var rep struct {
		Count         int `json:"count"`
		FilteredCount int `json:"filtered_count"`
		Displayed     int `json:"displayed"`
		Summary       audit.Summary
		Findings      []audit.Finding
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, 4, rep.Count)
	require.Equal(t, audit.Combined{Total: 4, Errors: 2, Warnings: 2}, rep.Summary.Combined)
	require.Equal(t, 1, rep.Summary.ByCode[audit.StaleRunning])
	require.Equal(t, 1, rep.Summary.ByCode[audit.StaleQueued])
	require.Equal(t, 1, rep.Summary.TaskFlows.ByCode[audit.MissingLinkedTasks])
	require.Equal(t, 1, rep.Summary.TaskFlows.ByCode[audit.EventsBacklog])
	var order []string
	for _, f := range rep.Findings {
		order = append(order, string(f.Severity)+" "+string(f.Code))
		require.NotNil(t, f.AgeMS)
	}
	require.Equal(t, "error", order[0][:5], "errors first: %v", order)
	require.Equal(t, "error", order[1][:5], "errors first: %v", order)
	require.Equal(t, []string{"warn events_backlog", "warn stale_queued"}, order[2:], "then the older first")

	code, out, _ = run(t, dir, "tasks", "audit", "--json", "--severity", "error", "--limit", "1")
	require.Equal(t, 0, code)
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	require.Equal(t, map[string]any{"severity": "error", "code": nil, "limit": float64(1)}, doc["filters"])
	require.Equal(t, []any{float64(4), float64(2), float64(1)}, []any{doc["count"], doc["filtered_count"], doc["displayed"]})
}

func TestTasksAuditFailOnAndBadFlags(t *testing.T) {
	t.Parallel()
	dir := auditHome(t)
	code, _, errOut := run(t, dir, "tasks", "audit", "--fail-on", "error")
	require.Equal(t, 4, code)
	require.Contains(t, errOut, "2 audit findings at or above error")
	code, _, _ = run(t, dir, "tasks", "audit", "--code", "stale_queued", "--fail-on", "warn")
	require.Equal(t, 4, code, "a warning that passes the filters fails at warn")
	code, _, _ = run(t, dir, "tasks", "audit", "--code", "stale_queued", "--fail-on", "error")
	require.Equal(t, 0, code, "the filters decide what --fail-on sees")
	code, _, _ = run(t, dir, "tasks", "audit", "--severity", "warn", "--limit", "1", "--fail-on", "warn")
	require.Equal(t, 4, code)

	for _, bad := range [][]string{
		{"--code", "nope"}, {"--severity", "fatal"}, {"--fail-on", "info"}, {"--limit", "0"}, {"extra"},
	} {
		code, _, errOut := run(t, dir, append([]string{"tasks", "audit"}, bad...)...)
		require.Equal(t, 2, code, "%v: %s", bad, errOut)
	}
	_, _, errOut = run(t, dir, "tasks", "audit", "--code", "nope")
	require.Contains(t, errOut, "stale_queued, stale_running")
	require.Contains(t, errOut, "index_mismatch")
	_, _, errOut = run(t, dir, "tasks", "audit", "--severity", "fatal")
	require.Contains(t, errOut, "want one of warn, error")
}

func TestTasksAuditTextLayout(t *testing.T) {
	t.Parallel()
	code, out, _ := run(t, t.TempDir(), "tasks", "audit")
	require.Equal(t, 0, code)
	require.Equal(t, "Tasks audit: 0 findings · 0 errors · 0 warnings\nTask findings: 0 · TaskFlow findings: 0\nNo tasks audit findings.\n"+
		"Not checked: controller_unavailable (no gateway runs, so the state of the controller plugins is unknown)\n", out)

	dir := auditHome(t)
	code, out, _ = run(t, dir, "tasks", "audit", "--severity", "warn", "--code", "stale_queued")
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, "Tasks audit: 4 findings · 2 errors · 2 warnings", lines[0])
	require.Equal(t, "Severity filter: warn", lines[1])
	require.Equal(t, "Code filter: stale_queued", lines[2])
	require.Equal(t, "Task findings: 1 · TaskFlow findings: 0", lines[3])
	require.Regexp(t, `^Scope\s+Severity\s+Code\s+Item\s+Status\s+Age\s+Detail$`, lines[4])
	require.Regexp(t, `^Task\s+warn\s+stale_queued\s+\S+\s+queued\s+1[45]m\s+queued task has not advanced recently$`, lines[5])

	code, out, _ = run(t, dir, "tasks", "audit")
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^TaskFlow\s+error\s+missing_linked_tasks\s+\S+\s+running\s+4[45]m\s+managed TaskFlow`, out)
}

// TestAuditOfAHealthyBusyStoreIsEmpty runs 200 flows of normal work
// through a real gateway and its pipeline plugin (pipelines, gates
// approved and denied, cancels at gates and of running tasks, retries,
// failures, plain tasks) across a gateway restart, and finds nothing to
// report, now and two hours later.
func TestAuditOfAHealthyBusyStoreIsEmpty(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 200 flows through a gateway")
	}
	t.Parallel()
	start := time.Now()
	dir := shortHome(t)
	wf := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(wf, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	plain := write("plain.lobster", "name: plain\nsteps:\n  - id: a\n    run: echo one\n  - id: b\n    stdin: $a.stdout\n    run: cat\n")
	gate := write("gate.lobster", "name: gate\nsteps:\n  - id: prep\n    run: echo ready\n  - id: review\n    approval: Go on?\n  - id: go\n    when: $review.approved\n    run: echo went\n")
	retry := write("retry.lobster", "name: retry\nargs:\n  marker: {}\nsteps:\n  - id: flaky\n    run: test -f \"${marker}\" || { touch \"${marker}\"; exit 1; }\n    retry:\n      max: 3\n      delay_ms: 10\n")
	fail := write("fail.lobster", "name: fail\nsteps:\n  - id: boom\n    run: exit 3\n")

	startGW := func() *gateway.Gateway {
		cfg := gateway.Config{Home: dir, Owner: "audit test gateway", Builtins: plugins.Names()}
		cfg.File.Limits.MaxRunning = 24 // the sleepers hold 10 slots
		g, err := gateway.New(cfg)
		require.NoError(t, err)
		require.NoError(t, g.Start(context.Background()))
		return g
	}
	g := startGW()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = g.Stop(context.Background())
		}
	})
	ctx := context.Background()
	c := g.Client()
	pipelineFlow := func(file string, args map[string]any) string {
		var raw json.RawMessage
		if args != nil {
			var err error
			raw, err = json.Marshal(args)
			require.NoError(t, err)
		}
		state, err := flows.Invocation{File: file, Args: raw, Cwd: wf}.State()
		require.NoError(t, err)
		f, err := c.CreateFlow(ctx, apitype.CreateFlowInput{ControllerID: flows.PipelineController, OwnerKey: "audit-test", Goal: filepath.Base(file), State: state})
		require.NoError(t, err)
		return f.ID
	}
	task := func(spec sdk.TaskSpec) string {
		tk, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "audit-test", Spec: spec})
		require.NoError(t, err)
		return tk.ID
	}

	var gates, cancelGates, sleepers []string
	for i := range 60 {
		pipelineFlow(plain, nil)
		if i < 40 {
			gates = append(gates, pipelineFlow(gate, nil))
		}
		if i < 20 {
			cancelGates = append(cancelGates, pipelineFlow(gate, nil))
			pipelineFlow(retry, map[string]any{"marker": filepath.Join(wf, fmt.Sprint("p", i))})
		}
		if i < 10 {
			pipelineFlow(fail, nil)
			task(sdk.TaskSpec{Shell: fmt.Sprintf(`test -f %s || { touch %[1]s; exit 1; }`, filepath.Join(wf, fmt.Sprint("t", i))),
				Retry: &sdk.RetryPolicy{MaxAttempts: 3, Backoff: sdk.Duration(10 * time.Millisecond)}})
			sleepers = append(sleepers, task(sdk.TaskSpec{Argv: []string{"sleep", "60"}}))
		}
		if i < 30 {
			task(sdk.TaskSpec{Argv: []string{"true"}})
		}
	}
	counts, err := c.CountFlows(ctx)
	require.NoError(t, err)
	require.Equal(t, 200, counts.Total)

	// waitFor polls the flows until cond holds, for at most a minute.
	waitFor := func(c api.Client, what string, cond func(apitype.FlowCounts) bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			n, err := c.CountFlows(ctx)
			require.NoError(t, err)
			if cond(n) {
				return
			}
			require.True(t, time.Now().Before(deadline), "timed out waiting for %s: %+v", what, n.ByStatus)
			time.Sleep(20 * time.Millisecond)
		}
	}
	// 60 gates wait, 10 sleepers run; everything else ends.
	waitFor(c, "the gates and the sleepers", func(n apitype.FlowCounts) bool {
		return n.ByStatus[sdk.FlowWaiting] == 60 && n.ByStatus[sdk.FlowRunning] == 10 &&
			n.ByStatus[sdk.FlowSucceeded]+n.ByStatus[sdk.FlowFailed] == 130
	})

	// Restart the gateway with work in flight: the sleepers keep running
	// under their shims, the gates keep waiting.
	require.NoError(t, g.Stop(ctx))
	g = startGW()
	c = g.Client()

	for i, id := range gates {
		verb := "approve"
		if i%4 == 0 {
			verb = "deny"
		}
		code, _, errOut := run(t, dir, "tasks", "flow", verb, id)
		require.Equal(t, 0, code, errOut)
	}
	for _, id := range cancelGates {
		_, err := c.CancelFlow(ctx, id, "")
		require.NoError(t, err)
	}
	for _, id := range sleepers {
		_, err := c.CancelTask(ctx, id)
		require.NoError(t, err)
	}
	waitFor(c, "every flow to end", func(n apitype.FlowCounts) bool {
		return n.ByStatus[sdk.FlowSucceeded]+n.ByStatus[sdk.FlowFailed]+n.ByStatus[sdk.FlowCancelled] == 200
	})
	// The last task.finished events reach the controller after the flows
	// end; wait for the outbox to drain.
	deadline := time.Now().Add(time.Minute)
	for {
		ps, err := c.Plugins(ctx)
		require.NoError(t, err)
		pending := 0
		for _, p := range ps {
			pending += p.Pending
		}
		if pending == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "events still pending: %+v", ps)
		time.Sleep(20 * time.Millisecond)
	}

	rep, err := c.Audit(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Findings, "a healthy store has no findings")
	require.Empty(t, rep.Skipped, "inside the gateway every check runs")
	code, out, errOut := run(t, dir, "tasks", "audit", "--fail-on", "warn")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "No tasks audit findings.")
	stopped = true
	require.NoError(t, g.Stop(ctx))

	// Two hours on, nothing has gone stale: every record is settled.
	l, err := api.OpenLocal(dir, "audit test")
	require.NoError(t, err)
	defer l.Close()
	later, err := audit.Run(ctx, audit.Config{Now: func() time.Time { return time.Now().Add(2 * time.Hour) }}, audit.Input{Engine: l.Engine()})
	require.NoError(t, err)
	require.Empty(t, later.Findings)
	t.Logf("200 flows of work, a restart and three audits in %s", time.Since(start).Round(time.Millisecond))
}
