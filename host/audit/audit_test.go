package audit_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/audit"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// clock is a test clock that moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// fixture is a real store and engine on an injected clock.
type fixture struct {
	st  *store.Bolt
	eng *engine.Engine
	clk *clock
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	clk := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	eng, err := engine.New(st, engine.Config{Now: clk.Now})
	require.NoError(t, err)
	return &fixture{st: st, eng: eng, clk: clk}
}

func (fx *fixture) audit(t *testing.T, in audit.Input) audit.Report {
	t.Helper()
	in.Engine = fx.eng
	r, err := audit.Run(context.Background(), audit.Config{Now: fx.clk.Now}, in)
	require.NoError(t, err)
	return r
}

// detached creates a task with its mirrored flow, in status s.
func (fx *fixture) detached(t *testing.T, s sdk.TaskStatus) *stored.Task {
	t.Helper()
	task, _, err := fx.eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Label: "job", Status: s})
	require.NoError(t, err)
	return task
}

// finished creates a detached task that ran and ended in status s.
func (fx *fixture) finished(t *testing.T, s sdk.TaskStatus) *stored.Task {
	t.Helper()
	task := fx.detached(t, sdk.TaskRunning)
	task, err := fx.eng.FinishTask(task.ID, engine.FinishInput{Status: s, Error: "the shim disappeared"})
	require.NoError(t, err)
	return task
}

// managed creates a managed flow of controller ctl, moves it to status
// (with patch), gives it one finished task unless bare, and acknowledges
// its events.
func (fx *fixture) managed(t *testing.T, ctl string, bare bool, p engine.FlowPatch) *sdk.Flow {
	t.Helper()
	f, err := fx.eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: ctl, Goal: "work"})
	require.NoError(t, err)
	if !bare {
		task, _, err := fx.eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Label: "step", Status: sdk.TaskRunning})
		require.NoError(t, err)
		_, err = fx.eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded})
		require.NoError(t, err)
	}
	if p.Status != "" {
		f, err = fx.eng.UpdateFlow(f.ID, f.Revision, p)
		require.NoError(t, err)
	}
	fx.ackAll(t, f.ID)
	return f
}

func (fx *fixture) ackAll(t *testing.T, flowID string) {
	t.Helper()
	evs, err := fx.eng.Events(flowID)
	require.NoError(t, err)
	for _, ev := range evs {
		require.NoError(t, fx.eng.AckEvent(flowID, ev.Seq))
	}
}

// failingJob adds a cron job and sets its record as the scheduler leaves
// one after failures runs failed in a row (enabled or not): the real
// failures are TestCronRunsAreCountedPerJobAndAFailingJobIsAFinding's,
// in host/gateway.
func (fx *fixture) failingJob(t *testing.T, failures int, enabled bool) string {
	t.Helper()
	j, err := scheduler.NewJobs(fx.eng, scheduler.JobsConfig{Now: fx.clk.Now}).Add(scheduler.JobInput{Name: "breaks", Schedule: schedule.Flags{Every: "1h"}, Command: "exit 3"})
	require.NoError(t, err)
	rewrite(t, fx, "cron/job/"+j.ID, func(v *scheduler.Job) {
		v.Enabled, v.State.ConsecutiveErrors, v.State.LastStatus, v.State.LastError = enabled, failures, scheduler.RunError, "exit status 3"
		v.State.LastRun = fx.clk.Now()
	})
	return j.ID
}

// rewrite is fault injection: it changes the stored record at key behind
// the engine's back, then brings the indexes in line with the damaged
// record, so that only the damage itself remains.
func rewrite[T any](t *testing.T, fx *fixture, key string, fn func(*T)) {
	t.Helper()
	require.NoError(t, fx.st.Update(t.Context(), func(tx store.Tx) error {
		it, err := tx.Get(key)
		if err != nil {
			return err
		}
		v := new(T)
		if err := json.Unmarshal(it.Value, v); err != nil {
			return err
		}
		fn(v)
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = tx.Put(key, b)
		return err
	}))
	_, err := fx.eng.RepairIndexes()
	require.NoError(t, err)
}

// raw writes (value non-nil) or deletes keys behind the engine's back.
func raw(t *testing.T, fx *fixture, key string, value []byte) {
	t.Helper()
	require.NoError(t, fx.st.Update(t.Context(), func(tx store.Tx) error {
		if value == nil {
			return tx.Delete(key)
		}
		_, err := tx.Put(key, value)
		return err
	}))
}

// sleeper starts a real process for a task to point at, and returns its
// pid and start time.
func sleeper(t *testing.T) (int, uint64) {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	st, err := shim.StartTime(cmd.Process.Pid)
	require.NoError(t, err)
	return cmd.Process.Pid, st
}

var pipelineRunning = audit.Input{PluginsKnown: true, Plugins: []pluginhost.Status{{Name: "pipeline", State: pluginhost.StateRunning}}}

// TestEveryCodeIsFoundAlone creates each condition through the engine
// (or, where the engine refuses to produce it, by writing the store
// directly) and sees exactly that finding.
func TestEveryCodeIsFoundAlone(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		code audit.Code
		kind audit.Kind
		sev  audit.Severity
		// setup makes the condition and returns the finding's token.
		setup func(t *testing.T, fx *fixture) string
		in    audit.Input
	}{
		{"stale_queued", audit.StaleQueued, audit.KindTask, audit.Warn, func(t *testing.T, fx *fixture) string {
			task := fx.detached(t, sdk.TaskQueued)
			fx.clk.Advance(10 * time.Minute)
			return task.ID
		}, audit.Input{}},
		{"stale_running", audit.StaleRunning, audit.KindTask, audit.Error, func(t *testing.T, fx *fixture) string {
			task := fx.detached(t, sdk.TaskRunning)
			fx.clk.Advance(30 * time.Minute)
			return task.ID
		}, audit.Input{}},
		{"lost while retained", audit.Lost, audit.KindTask, audit.Warn, func(t *testing.T, fx *fixture) string {
			task := fx.finished(t, sdk.TaskLost)
			fx.clk.Advance(time.Hour)
			return task.ID
		}, audit.Input{}},
		{"lost past retention", audit.Lost, audit.KindTask, audit.Error, func(t *testing.T, fx *fixture) string {
			task := fx.finished(t, sdk.TaskLost)
			fx.clk.Advance(7 * 24 * time.Hour)
			return task.ID
		}, audit.Input{}},
		{"delivery_failed", audit.DeliveryFailed, audit.KindTask, audit.Warn, func(t *testing.T, fx *fixture) string {
			f := fx.managed(t, "ctl", true, engine.FlowPatch{})
			task, _, err := fx.eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Status: sdk.TaskRunning})
			require.NoError(t, err)
			_, err = fx.eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded})
			require.NoError(t, err)
			evs, err := fx.eng.Events(f.ID)
			require.NoError(t, err)
			require.Len(t, evs, 1)
			_, err = fx.eng.EventFailed(f.ID, evs[0].Seq, engine.EventFailure{Error: "controller said no", Park: true, Counted: true, Summary: "event delivery failed"})
			require.NoError(t, err)
			fx.clk.Advance(time.Minute)
			return task.ID
		}, audit.Input{}},
		{"missing_cleanup", audit.MissingCleanup, audit.KindTask, audit.Warn, func(t *testing.T, fx *fixture) string {
			task := fx.finished(t, sdk.TaskSucceeded)
			rewrite(t, fx, "task/"+task.ID, func(v *stored.Task) { v.CleanupAfter = time.Time{} })
			return task.ID
		}, audit.Input{}},
		{"task inconsistent_timestamps", audit.InconsistentTimestamps, audit.KindTask, audit.Warn, func(t *testing.T, fx *fixture) string {
			task := fx.finished(t, sdk.TaskSucceeded)
			rewrite(t, fx, "task/"+task.ID, func(v *stored.Task) { v.StartedAt = v.CreatedAt.Add(-time.Minute) })
			return task.ID
		}, audit.Input{}},
		{"orphan_process", audit.OrphanProcess, audit.KindTask, audit.Error, func(t *testing.T, fx *fixture) string {
			pid, start := sleeper(t)
			task := fx.detached(t, sdk.TaskRunning)
			_, err := fx.eng.SetProcess(task.ID, 1, engine.StartInput{PID: pid, PIDStartTime: start})
			require.NoError(t, err)
			_, err = fx.eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded})
			require.NoError(t, err)
			fx.clk.Advance(time.Minute)
			return task.ID
		}, audit.Input{}},
		{"dangling_task", audit.DanglingTask, audit.KindTask, audit.Error, func(t *testing.T, fx *fixture) string {
			task := fx.detached(t, sdk.TaskQueued)
			raw(t, fx, "flow/"+task.FlowID, nil)
			_, err := fx.eng.RepairIndexes()
			require.NoError(t, err)
			return task.ID
		}, audit.Input{}},
		{"task index_mismatch", audit.IndexMismatch, audit.KindTask, audit.Error, func(t *testing.T, fx *fixture) string {
			task := fx.detached(t, sdk.TaskQueued)
			raw(t, fx, "idx/task/status/queued/"+task.ID, nil)
			return task.ID
		}, audit.Input{}},
		{"task near_size_limit", audit.NearSizeLimit, audit.KindTask, audit.Warn, func(t *testing.T, fx *fixture) string {
			task := fx.finished(t, sdk.TaskSucceeded)
			rewrite(t, fx, "task/"+task.ID, func(v *stored.Task) { v.Result = &sdk.Result{Stdout: strings.Repeat("x", 800<<10)} })
			return task.ID
		}, audit.Input{}},
		{"restore_failed", audit.RestoreFailed, audit.KindFlow, audit.Error, func(t *testing.T, fx *fixture) string {
			fx.finished(t, sdk.TaskSucceeded)
			raw(t, fx, "flow/zz-damaged", []byte("{not json"))
			return "zz-damaged" // reported by itself; the other records are still audited
		}, audit.Input{}},
		{"flow stale_running", audit.StaleRunning, audit.KindFlow, audit.Error, func(t *testing.T, fx *fixture) string {
			f := fx.managed(t, "ctl", false, engine.FlowPatch{Status: sdk.FlowRunning})
			fx.clk.Advance(30 * time.Minute)
			return f.ID
		}, audit.Input{}},
		{"stale_waiting", audit.StaleWaiting, audit.KindFlow, audit.Warn, func(t *testing.T, fx *fixture) string {
			f := fx.managed(t, "ctl", false, engine.FlowPatch{Status: sdk.FlowWaiting, Wait: json.RawMessage(`{"kind":"approval"}`)})
			fx.clk.Advance(30 * time.Minute)
			return f.ID
		}, audit.Input{}},
		{"stale_blocked", audit.StaleBlocked, audit.KindFlow, audit.Warn, func(t *testing.T, fx *fixture) string {
			why := "needs a person"
			f := fx.managed(t, "ctl", false, engine.FlowPatch{Status: sdk.FlowBlocked, BlockedSummary: &why})
			fx.clk.Advance(30 * time.Minute)
			return f.ID
		}, audit.Input{}},
		{"cancel_stuck", audit.CancelStuck, audit.KindFlow, audit.Warn, func(t *testing.T, fx *fixture) string {
			f := fx.managed(t, "ctl", false, engine.FlowPatch{Status: sdk.FlowRunning})
			rewrite(t, fx, "flow/"+f.ID, func(v *sdk.Flow) { v.CancelRequestedAt = v.UpdatedAt })
			fx.clk.Advance(5 * time.Minute)
			return f.ID
		}, audit.Input{}},
		{"missing_linked_tasks", audit.MissingLinkedTasks, audit.KindFlow, audit.Error, func(t *testing.T, fx *fixture) string {
			f := fx.managed(t, "ctl", true, engine.FlowPatch{Status: sdk.FlowRunning})
			fx.clk.Advance(30 * time.Minute)
			return f.ID
		}, audit.Input{}},
		{"blocked_task_missing", audit.BlockedTaskMissing, audit.KindFlow, audit.Warn, func(t *testing.T, fx *fixture) string {
			ghost := "no-such-task"
			f := fx.managed(t, "ctl", false, engine.FlowPatch{Status: sdk.FlowBlocked, BlockedTaskID: &ghost})
			fx.clk.Advance(time.Minute)
			return f.ID
		}, audit.Input{}},
		{"flow inconsistent_timestamps", audit.InconsistentTimestamps, audit.KindFlow, audit.Warn, func(t *testing.T, fx *fixture) string {
			f := fx.managed(t, "ctl", false, engine.FlowPatch{})
			rewrite(t, fx, "flow/"+f.ID, func(v *sdk.Flow) { v.UpdatedAt = v.CreatedAt.Add(-time.Second) })
			return f.ID
		}, audit.Input{}},
		{"flow near_size_limit", audit.NearSizeLimit, audit.KindFlow, audit.Warn, func(t *testing.T, fx *fixture) string {
			f := fx.managed(t, "ctl", false, engine.FlowPatch{})
			rewrite(t, fx, "flow/"+f.ID, func(v *sdk.Flow) { v.State = json.RawMessage(`"` + strings.Repeat("x", 800<<10) + `"`) })
			return f.ID
		}, audit.Input{}},
		{"controller not configured", audit.ControllerUnavailable, audit.KindFlow, audit.Error, func(t *testing.T, fx *fixture) string {
			f := fx.managed(t, "ghost", false, engine.FlowPatch{})
			fx.clk.Advance(time.Minute)
			return f.ID
		}, pipelineRunning},
		{"controller failed", audit.ControllerUnavailable, audit.KindFlow, audit.Error, func(t *testing.T, fx *fixture) string {
			return fx.managed(t, "ctl", false, engine.FlowPatch{}).ID
		}, audit.Input{PluginsKnown: true, Plugins: []pluginhost.Status{{Name: "ctl", State: pluginhost.StateFailed, LastError: "restart budget spent"}}}},
		{"events_backlog", audit.EventsBacklog, audit.KindFlow, audit.Warn, func(t *testing.T, fx *fixture) string {
			f, err := fx.eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "never picked up"})
			require.NoError(t, err)
			fx.clk.Advance(10 * time.Minute)
			return f.ID
		}, audit.Input{}},
		{"continuation_not_started", audit.ContinuationNotStarted, audit.KindFlow, audit.Warn, func(t *testing.T, fx *fixture) string {
			f, err := fx.eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g", State: json.RawMessage(`{"plan":{"nodes":[{"id":"a"}]}}`)})
			require.NoError(t, err)
			f, err = fx.eng.Fail(f.ID, f.Revision, engine.EndInput{BlockedSummary: "a failed"})
			require.NoError(t, err)
			fx.ackAll(t, f.ID)
			succ, _, err := fx.eng.ContinueFlow(f.ID, sdk.ContinueRequest{ExpectedRevision: f.Revision, Reason: "retry a"})
			require.NoError(t, err)
			fx.clk.Advance(10 * time.Minute)
			return succ.ID
		}, audit.Input{}},
		{"mirror_mismatch", audit.MirrorMismatch, audit.KindFlow, audit.Warn, func(t *testing.T, fx *fixture) string {
			task := fx.finished(t, sdk.TaskSucceeded)
			rewrite(t, fx, "flow/"+task.FlowID, func(v *sdk.Flow) { v.Status, v.EndedAt = sdk.FlowRunning, time.Time{} })
			fx.clk.Advance(time.Minute)
			return task.FlowID
		}, audit.Input{}},
		{"notify_failed", audit.NotifyFailed, audit.KindFlow, audit.Warn, func(t *testing.T, fx *fixture) string {
			task := fx.finished(t, sdk.TaskSucceeded)
			key := task.FlowID + "/succeeded/ops"
			require.NoError(t, fx.eng.QueueNotice(engine.Notice{Key: key, FlowID: task.FlowID, Status: "succeeded", Event: "flow.finished", Dest: "ops"}))
			require.NoError(t, fx.eng.NoticeGaveUp(key, "ops", "answered 503"))
			return task.FlowID
		}, audit.Input{}},
		{"cron_job_failing", audit.JobFailing, audit.KindFlow, audit.Warn, func(t *testing.T, fx *fixture) string {
			return fx.failingJob(t, 3, true)
		}, audit.Input{}},
		{"cron_job_failing and disabled", audit.JobFailing, audit.KindFlow, audit.Error, func(t *testing.T, fx *fixture) string {
			return fx.failingJob(t, schedule.DisableAfter, false)
		}, audit.Input{}},
		{"flow index_mismatch", audit.IndexMismatch, audit.KindFlow, audit.Error, func(t *testing.T, fx *fixture) string {
			fx.finished(t, sdk.TaskSucceeded)
			raw(t, fx, "idx/flow/status/running/ghost-flow", []byte{})
			return "ghost-flow"
		}, audit.Input{}},
	}
	covered := map[audit.Code]bool{}
	for _, c := range cases {
		covered[c.code] = true
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fx := newFixture(t)
			token := c.setup(t, fx)
			r := fx.audit(t, c.in)
			require.Len(t, r.Findings, 1, "findings: %+v", r.Findings)
			f := r.Findings[0]
			require.Equal(t, c.code, f.Code, f.Detail)
			require.Equal(t, c.kind, f.Kind)
			require.Equal(t, c.sev, f.Severity, f.Detail)
			require.Equal(t, token, f.Token)
			require.NotEmpty(t, f.Detail)
			if c.kind == audit.KindTask {
				require.Equal(t, 1, r.Summary.Total)
				require.Equal(t, 1, r.Summary.ByCode[c.code])
			} else {
				require.Equal(t, 1, r.Summary.TaskFlows.Total)
				require.Equal(t, 1, r.Summary.TaskFlows.ByCode[c.code])
			}
			require.Equal(t, 1, r.Summary.Combined.Total)
		})
	}
	for _, code := range audit.Codes() {
		require.True(t, covered[code], "no test creates %s", code)
	}
}

// TestHealthyWorkIsNotReported covers what the reference reports on
// healthy systems and flowgate does not.
func TestHealthyWorkIsNotReported(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	// A long task under a live process, in a running managed flow.
	pid, start := sleeper(t)
	f := fx.managed(t, "ctl", true, engine.FlowPatch{Status: sdk.FlowRunning})
	long, _, err := fx.eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Status: sdk.TaskRunning})
	require.NoError(t, err)
	_, err = fx.eng.SetProcess(long.ID, 1, engine.StartInput{PID: pid, PIDStartTime: start})
	require.NoError(t, err)
	fx.ackAll(t, f.ID)
	// A retry that may not start for an hour.
	retry := fx.detached(t, sdk.TaskRunning)
	_, err = fx.eng.RequeueTask(retry.ID, engine.RequeueInput{Attempt: 1, RetryAt: fx.clk.Now().Add(time.Hour), Error: "exit 75"})
	require.NoError(t, err)
	// A flow waiting on a timer due in two hours.
	fx.managed(t, "ctl", false, engine.FlowPatch{Status: sdk.FlowWaiting,
		Wait: json.RawMessage(`{"kind":"timer","until":"` + fx.clk.Now().Add(2*time.Hour).Format(time.RFC3339) + `"}`)})
	// A task of every status, each with its mirrored flow as the engine
	// derives it: no mirror_mismatch for any. Blocked is left out: a run
	// that waits for a person is reported stale_blocked after a while.
	for _, s := range sdk.TaskStatuses() {
		if s.Terminal() && s != sdk.TaskBlocked {
			fx.finished(t, s)
		}
	}
	fx.clk.Advance(time.Hour)
	// Terminal tasks only: cleanup stamped, nothing stale, lost retained.
	r := fx.audit(t, audit.Input{PluginsKnown: true, Plugins: []pluginhost.Status{{Name: "ctl", State: pluginhost.StateBackoff, Since: fx.clk.Now().Add(-time.Minute)}}})
	for _, f := range r.Findings {
		require.Equal(t, audit.Lost, f.Code, "only the lost task is reported: %+v", f)
	}
	require.Len(t, r.Findings, 1)
	require.Empty(t, r.Skipped, "the plugins' state is known")

	r = fx.audit(t, audit.Input{})
	require.Equal(t, []audit.Skip{{Code: audit.ControllerUnavailable, Reason: "no gateway runs, so the state of the controller plugins is unknown"}}, r.Skipped)
}

func TestMirroredFlowsAgreeWithTheEngine(t *testing.T) {
	t.Parallel()
	fx := newFixture(t)
	fx.detached(t, sdk.TaskQueued)
	fx.detached(t, sdk.TaskRunning)
	for _, s := range sdk.TaskStatuses() {
		if s.Terminal() {
			task := fx.finished(t, s)
			_, err := fx.eng.CancelFlow(task.FlowID, "")
			if s == sdk.TaskBlocked {
				require.NoError(t, err, "a blocked run waits for a person, and may be cancelled")
				continue
			}
			require.ErrorIs(t, err, sdk.ErrTerminal)
		}
	}
	cancelled := fx.detached(t, sdk.TaskQueued)
	_, err := fx.eng.CancelFlow(cancelled.FlowID, "")
	require.NoError(t, err)
	r := fx.audit(t, audit.Input{})
	for _, f := range r.Findings {
		require.NotEqual(t, audit.MirrorMismatch, f.Code, f.Detail)
		require.NotEqual(t, audit.InconsistentTimestamps, f.Code, f.Detail)
	}
}

func TestSortErrorsFirstThenOldest(t *testing.T) {
	t.Parallel()
	age := func(ms int64) *int64 { return &ms }
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fs := []audit.Finding{
		{Severity: audit.Warn, Code: "w-young", AgeMS: age(1)},
		{Severity: audit.Warn, Code: "w-none"},
		{Severity: audit.Error, Code: "e-young", AgeMS: age(5)},
		{Severity: audit.Warn, Code: "w-old-new", AgeMS: age(9), Task: &stored.Task{Task: sdk.Task{CreatedAt: t0.Add(time.Hour)}}},
		{Severity: audit.Warn, Code: "w-old-old", AgeMS: age(9), Flow: &sdk.Flow{CreatedAt: t0}},
		{Severity: audit.Error, Code: "e-old", AgeMS: age(50)},
	}
	audit.Sort(fs)
	var got []audit.Code
	for _, f := range fs {
		got = append(got, f.Code)
	}
	require.Equal(t, []audit.Code{"e-old", "e-young", "w-old-old", "w-old-new", "w-young", "w-none"}, got)
}

func TestConfigValidateNamesTheField(t *testing.T) {
	t.Parallel()
	_, err := audit.Run(context.Background(), audit.Config{CancelStuck: -time.Second}, audit.Input{Engine: newFixture(t).eng})
	require.ErrorContains(t, err, "CancelStuck must not be negative")
	_, err = audit.Run(context.Background(), audit.Config{}, audit.Input{})
	require.ErrorContains(t, err, "Engine is required")
}
