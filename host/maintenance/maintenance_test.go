package maintenance_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

type env struct {
	t    *testing.T
	home string
	st   store.Store
	eng  *engine.Engine
	now  time.Time
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, home: t.TempDir(), now: t0}
	st, err := store.Open(filepath.Join(e.home, "flowgate.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	e.st = st
	e.eng, err = engine.New(st, engine.Config{Now: func() time.Time { return e.now }})
	require.NoError(t, err)
	return e
}

func (e *env) run(apply bool) maintenance.Summary {
	e.t.Helper()
	s, err := maintenance.Run(context.Background(), e.eng, maintenance.Config{Home: e.home, Now: func() time.Time { return e.now }, Apply: apply})
	require.NoError(e.t, err)
	require.Empty(e.t, s.Errors)
	return s
}

// task makes a detached task (with its mirrored flow) that ended in s,
// with a log directory.
func (e *env) task(s sdk.TaskStatus) *stored.Task {
	e.t.Helper()
	t, _, err := e.eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Runtime: "cli", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(e.t, err)
	t, err = e.eng.StartTask(t.ID, engine.StartInput{})
	require.NoError(e.t, err)
	require.NoError(e.t, os.MkdirAll(runner.LogDir(e.home, t.ID, t.Attempts), 0o700))
	if s == sdk.TaskRunning {
		return t
	}
	t, err = e.eng.FinishTask(t.ID, engine.FinishInput{Status: s, Attempt: t.Attempts})
	require.NoError(e.t, err)
	return t
}

func (e *env) raw(key string, fn func(v map[string]any)) {
	e.t.Helper()
	require.NoError(e.t, e.st.Update(e.t.Context(), func(tx store.Tx) error {
		it, err := tx.Get(key)
		if err != nil {
			return err
		}
		var v map[string]any
		if err := json.Unmarshal(it.Value, &v); err != nil {
			return err
		}
		fn(v)
		b, _ := json.Marshal(v)
		_, err = tx.Put(key, b)
		return err
	}))
}

// snapshot is every key and value in the store.
func (e *env) snapshot() map[string]string {
	e.t.Helper()
	m := map[string]string{}
	require.NoError(e.t, e.st.View(e.t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("", store.ScanOptions{}, func(it store.Item) bool {
			m[it.Key] = string(it.Value)
			return true
		})
	}))
	return m
}

func TestEveryRuleInPreviewThenApply(t *testing.T) {
	e := newEnv(t)

	// A running task whose shim claimed the attempt and died silently.
	gone := e.task(sdk.TaskRunning)
	require.NoError(t, shim.WriteJSONAtomic(filepath.Join(runner.LogDir(e.home, gone.ID, gone.Attempts), shim.InfoFile),
		shim.ProcInfo{PID: 1 << 22, StartTime: 1}))
	// A running task whose shim runs: this process plays it.
	live := e.task(sdk.TaskRunning)
	start, err := shim.StartTime(os.Getpid())
	require.NoError(t, err)
	require.NoError(t, shim.WriteJSONAtomic(filepath.Join(runner.LogDir(e.home, live.ID, live.Attempts), shim.InfoFile),
		shim.ProcInfo{PID: os.Getpid(), StartTime: start}))

	// A terminal task that lost its cleanup stamp.
	unstamped := e.task(sdk.TaskSucceeded)
	e.raw("task/"+unstamped.ID, func(v map[string]any) { delete(v, "cleanup_after") })
	// A task whose flow is gone.
	dangling := e.task(sdk.TaskFailed)
	require.NoError(t, e.st.Update(t.Context(), func(tx store.Tx) error { return tx.Delete("flow/" + dangling.FlowID) }))
	// A mirrored flow out of step with its task.
	drifted := e.task(sdk.TaskSucceeded)
	e.raw("flow/"+drifted.FlowID, func(v map[string]any) { v["status"] = "running" })
	// A managed flow whose cancel missed its end.
	stuck, err := e.eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "stuck"})
	require.NoError(t, err)
	e.raw("flow/"+stuck.ID, func(v map[string]any) { v["cancel_requested_at"] = t0.Format(time.RFC3339Nano) })
	// Flows that can still move, and an old finished one.
	waiting, err := e.eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "gate"})
	require.NoError(t, err)
	_, err = e.eng.SetWaiting(waiting.ID, waiting.Revision, engine.WaitInput{CurrentStep: "approve"})
	require.NoError(t, err)
	blocked, err := e.eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "blocked"})
	require.NoError(t, err)
	_, err = e.eng.UpdateFlow(blocked.ID, blocked.Revision, engine.FlowPatch{Status: sdk.FlowBlocked})
	require.NoError(t, err)
	old := e.task(sdk.TaskSucceeded)
	// An index entry with no record.
	require.NoError(t, e.st.Update(t.Context(), func(tx store.Tx) error { _, err := tx.Put("idx/flow/status/running/ghost", nil); return err }))

	// What controllers kept for the old flow, and for one that stays.
	oldData, keptData := filepath.Join(e.home, home.DataDir, old.FlowID), filepath.Join(e.home, home.DataDir, waiting.ID)
	for _, d := range []string{oldData, keptData} {
		require.NoError(t, os.MkdirAll(d, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(d, "v.json"), []byte("{}"), 0o600))
	}

	e.now = t0.Add(8 * 24 * time.Hour)
	before := e.snapshot()
	preview := e.run(false)
	require.Equal(t, before, e.snapshot(), "a preview writes nothing")

	applied := e.run(true)
	// The old flow and the unstamped task's flow ended 8 days ago; their
	// tasks are pruned with them and counted with the dangling one.
	want := maintenance.Summary{
		Tasks:     maintenance.TaskCounts{Reconciled: 1, CleanupStamped: 1, Pruned: 3},
		TaskFlows: maintenance.FlowCounts{Reconciled: 2, Pruned: 2},
	}
	for _, got := range []maintenance.Summary{preview, applied} {
		require.Equal(t, want.Tasks, got.Tasks, "%+v", got)
		require.Equal(t, want.TaskFlows, got.TaskFlows, "%+v", got)
	}
	// The ghost entry, the deleted flow's three entries, and the drifted
	// flow's status entry (running is missing, succeeded is an orphan);
	// the mirror repair fixes the last two before the index pass.
	require.Equal(t, 6, preview.Indexes)
	require.Equal(t, 4, applied.Indexes)
	require.Equal(t, "preview", preview.Mode)
	require.Equal(t, "apply", applied.Mode)
	require.Equal(t, 3, applied.LogsRemoved, "the dangling task's and the pruned flows' tasks'")
	require.NoDirExists(t, oldData, "a pruned flow's kept values go with it")
	require.FileExists(t, filepath.Join(keptData, "v.json"))

	get := func(id string) *stored.Task {
		t.Helper()
		task, err := e.eng.GetTask(id)
		require.NoError(t, err)
		return task
	}
	require.Equal(t, sdk.TaskLost, get(gone.ID).Status)
	require.Equal(t, sdk.TaskRunning, get(live.ID).Status, "a live shim keeps its task")
	_, err = e.eng.GetTask(unstamped.ID)
	require.ErrorIs(t, err, sdk.ErrNotFound, "stamped, then pruned with its flow")
	_, err = e.eng.GetTask(dangling.ID)
	require.ErrorIs(t, err, sdk.ErrNotFound)
	require.NoDirExists(t, filepath.Join(e.home, "logs", dangling.ID))
	f, err := e.eng.GetFlow(drifted.FlowID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowSucceeded, f.Status)
	f, err = e.eng.GetFlow(stuck.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowCancelled, f.Status)
	for _, id := range []string{waiting.ID, blocked.ID} {
		_, err := e.eng.GetFlow(id)
		require.NoError(t, err, "a flow that can still move is never pruned")
	}
	_, err = e.eng.GetFlow(old.FlowID)
	require.ErrorIs(t, err, sdk.ErrNotFound)
	require.NoDirExists(t, filepath.Join(e.home, "logs", old.ID))
	problems, err := e.eng.CheckIndexes()
	require.NoError(t, err)
	require.Empty(t, problems)

	// A second pass finds nothing more to do but what time brings.
	again := e.run(true)
	require.Zero(t, again.Tasks.Reconciled+again.Tasks.CleanupStamped+again.TaskFlows.Reconciled+again.Indexes)
}

func TestGraceKeepsARecentlyUpdatedTask(t *testing.T) {
	e := newEnv(t)
	gone := e.task(sdk.TaskRunning)
	require.NoError(t, shim.WriteJSONAtomic(filepath.Join(runner.LogDir(e.home, gone.ID, gone.Attempts), shim.InfoFile),
		shim.ProcInfo{PID: 1 << 22, StartTime: 1}))
	e.now = t0.Add(4 * time.Minute)
	require.Zero(t, e.run(true).Tasks.Reconciled, "inside the 5 minute grace")
	e.now = t0.Add(6 * time.Minute)
	require.Equal(t, 1, e.run(true).Tasks.Reconciled)
}

func TestStampKeepsARecentTask(t *testing.T) {
	e := newEnv(t)
	task := e.task(sdk.TaskSucceeded)
	e.raw("task/"+task.ID, func(v map[string]any) { delete(v, "cleanup_after") })
	e.now = t0.Add(time.Hour)
	s := e.run(true)
	require.Equal(t, maintenance.TaskCounts{CleanupStamped: 1}, s.Tasks)
	require.Zero(t, s.TaskFlows.Pruned)
	got, err := e.eng.GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, task.EndedAt.Add(7*24*time.Hour), got.CleanupAfter)
}

// A quick pass does what normal operation needs (lost tasks, stuck
// cancels, expired flows) and leaves damage to a full pass.
func TestQuickPassReadsOnlyLiveAndExpiringWork(t *testing.T) {
	e := newEnv(t)
	gone := e.task(sdk.TaskRunning)
	require.NoError(t, shim.WriteJSONAtomic(filepath.Join(runner.LogDir(e.home, gone.ID, gone.Attempts), shim.InfoFile),
		shim.ProcInfo{PID: 1 << 22, StartTime: 1}))
	stuck, err := e.eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "stuck"})
	require.NoError(t, err)
	e.raw("flow/"+stuck.ID, func(v map[string]any) { v["cancel_requested_at"] = t0.Format(time.RFC3339Nano) })
	old := e.task(sdk.TaskSucceeded)
	unstamped := e.task(sdk.TaskSucceeded)
	e.now = t0.Add(time.Hour)
	e.raw("task/"+unstamped.ID, func(v map[string]any) { delete(v, "cleanup_after") })
	require.NoError(t, e.st.Update(t.Context(), func(tx store.Tx) error { _, err := tx.Put("idx/flow/status/running/ghost", nil); return err }))

	e.now = t0.Add(8 * 24 * time.Hour)
	s, err := maintenance.Run(context.Background(), e.eng, maintenance.Config{Home: e.home, Now: func() time.Time { return e.now }, Apply: true, Quick: true})
	require.NoError(t, err)
	require.Empty(t, s.Errors)
	require.Equal(t, maintenance.TaskCounts{Reconciled: 1, Pruned: 2}, s.Tasks, "old and unstamped, pruned with their flows")
	require.Equal(t, maintenance.FlowCounts{Reconciled: 1, Pruned: 2}, s.TaskFlows, "the stuck cancel; old's and unstamped's flows")
	require.Zero(t, s.Indexes, "indexes are a full pass's")
	_, err = e.eng.GetFlow(old.FlowID)
	require.ErrorIs(t, err, sdk.ErrNotFound)
}

// A running task another gateway started (Config.Mine says its files are
// not in this home) is not marked lost for having no shim here: it runs
// under that gateway's home. One this home's gateway started is.
func TestReconcileJudgesOnlyThisHomesTasks(t *testing.T) {
	e := newEnv(t)
	start := func(gateway string) *stored.Task {
		task, _, err := e.eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Runtime: "cli", Spec: sdk.TaskSpec{Shell: "true"}})
		require.NoError(t, err)
		task, err = e.eng.StartTask(task.ID, engine.StartInput{Gateway: gateway})
		require.NoError(t, err)
		// The shim's record names a process that is gone.
		dir := runner.LogDir(e.home, task.ID, task.Attempts)
		require.NoError(t, os.MkdirAll(dir, 0o700))
		require.NoError(t, shim.WriteJSONAtomic(filepath.Join(dir, shim.InfoFile), shim.ProcInfo{PID: 1 << 22, StartTime: 1}))
		return task
	}
	theirs, ours := start("node-b.2"), start("node-a.1")
	e.now = t0.Add(time.Hour)
	cfg := maintenance.Config{Home: e.home, Now: func() time.Time { return e.now }, Apply: true,
		Mine: func(gateway string) bool { return gateway == "node-a.1" }}
	s, err := maintenance.Run(context.Background(), e.eng, cfg)
	require.NoError(t, err)
	require.Equal(t, 1, s.Tasks.Reconciled)
	got, err := e.eng.GetTask(theirs.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status, "another gateway's task was marked lost")
	got, err = e.eng.GetTask(ours.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskLost, got.Status)
}

// A task recorded running whose attempt no shim ever took (its start was
// written, but the store reported the write as failed, so the runner
// launched nothing) is queued again once the grace has passed, as a
// gateway's start would: it never ran, so it runs once.
func TestUnclaimedAttemptIsQueuedAgain(t *testing.T) {
	e := newEnv(t)
	task, _, err := e.eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Runtime: "cli", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	task, err = e.eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	e.now = t0.Add(4 * time.Minute)
	require.Zero(t, e.run(true).Tasks.Reconciled, "inside the 5 minute grace")
	e.now = t0.Add(6 * time.Minute)
	require.Equal(t, 1, e.run(true).Tasks.Reconciled)
	got, err := e.eng.GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskQueued, got.Status)
	require.NotEmpty(t, got.Errors)
	require.Contains(t, got.Errors[len(got.Errors)-1], "no shim took it in 5m0s")
}
