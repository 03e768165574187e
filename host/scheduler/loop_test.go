package scheduler_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// loopEnv is a real store and engine with no runner; the test plays the
// runner by finishing tasks itself, and drives the clock by hand.
type loopEnv struct {
	t     testing.TB
	clock *jobClock
	st    store.Store
	eng   *engine.Engine
	sched *scheduler.Scheduler
}

var t0 = time.Date(2026, 3, 2, 10, 0, 30, 0, time.UTC)

func newLoopEnv(t testing.TB, cfg scheduler.Config) *loopEnv {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{Owner: t.Name()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return newLoopEnvOn(t, st, cfg)
}

// newLoopEnvOn is newLoopEnv over the store st.
func newLoopEnvOn(t testing.TB, st store.Store, cfg scheduler.Config) *loopEnv {
	t.Helper()
	c := &jobClock{t: t0}
	eng, err := engine.New(st, engine.Config{Now: c.now})
	require.NoError(t, err)
	cfg.Now = c.now
	return &loopEnv{t: t, clock: c, st: st, eng: eng, sched: scheduler.New(eng, cfg)}
}

func (e *loopEnv) add(in scheduler.JobInput) scheduler.Job {
	e.t.Helper()
	j, err := e.sched.Jobs().Add(in)
	require.NoError(e.t, err)
	return j
}

func (e *loopEnv) tickAt(at time.Time) {
	e.t.Helper()
	e.clock.set(at)
	require.NoError(e.t, e.sched.TickOnce(context.Background()))
}

func (e *loopEnv) runs(ref string) []scheduler.Run {
	e.t.Helper()
	rs, err := e.sched.Runs(ref, 0)
	require.NoError(e.t, err)
	return rs
}

func byStatus(rs []scheduler.Run) map[string]int {
	m := map[string]int{}
	for _, r := range rs {
		m[r.Status]++
	}
	return m
}

// finishTask plays the runner: start the task and end it in status.
func (e *loopEnv) finishTask(id string, status sdk.TaskStatus) {
	e.t.Helper()
	_, err := e.eng.StartTask(id, engine.StartInput{})
	require.NoError(e.t, err)
	_, err = e.eng.FinishTask(id, engine.FinishInput{Status: status, Error: "exit 1"})
	require.NoError(e.t, err)
}

func (e *loopEnv) tasks(owner string) []*stored.Task {
	e.t.Helper()
	page, err := e.eng.ListTasks(engine.TaskFilter{OwnerKey: owner})
	require.NoError(e.t, err)
	return page.Tasks
}

func minute(m int) time.Time { return time.Date(2026, 3, 2, 10, m, 0, 0, time.UTC) }

func everyMinute(name string) scheduler.JobInput {
	return scheduler.JobInput{Name: name, Schedule: schedule.Flags{Cron: "* * * * *"}, Command: "echo hi"}
}

func TestCommandJobFiresOncePerScheduledTime(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(everyMinute("tick"))
	e.tickAt(t0)
	require.Empty(t, e.runs(j.ID))
	for m := 1; m <= 5; m++ {
		at := minute(m).Add(5 * time.Second)
		e.tickAt(at)
		e.tickAt(at.Add(time.Second)) // a second tick in the same minute fires nothing more
		rs := e.runs(j.ID)
		require.Len(t, rs, m)
		require.Equal(t, minute(m), rs[0].Scheduled)
		require.Equal(t, scheduler.RunRunning, rs[0].Status)
		require.NotEmpty(t, rs[0].TaskID)
		task, err := e.eng.GetTask(rs[0].TaskID)
		require.NoError(t, err)
		require.Equal(t, "cron", task.Runtime)
		require.Equal(t, "echo hi", task.Spec.Shell)
		require.Equal(t, "cron:"+j.ID+":"+minute(m).Format(time.RFC3339Nano), task.IdempotencyKey)
		e.finishTask(task.ID, sdk.TaskSucceeded)
	}
	e.tickAt(minute(5).Add(30 * time.Second))
	rs := e.runs(j.ID)
	require.Equal(t, map[string]int{scheduler.RunOK: 5}, byStatus(rs))
	require.Len(t, e.tasks("cron:"+j.ID), 5)
	got, err := e.sched.Jobs().Get(j.ID)
	require.NoError(t, err)
	require.Equal(t, minute(6), got.State.NextRun)
	require.Equal(t, minute(5), got.State.LastRun)
	require.Equal(t, scheduler.RunOK, got.State.LastStatus)
}

func TestRestartDoesNotRefire(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(everyMinute("tick"))
	e.tickAt(minute(1).Add(time.Second))
	require.Len(t, e.runs(j.ID), 1)

	// A new Scheduler on the same store, at the same instant and later in
	// the same minute: nothing fires again, and the open run is followed.
	again := scheduler.New(e.eng, scheduler.Config{Now: e.clock.now})
	e.sched = again
	e.tickAt(minute(1).Add(2 * time.Second))
	e.tickAt(minute(1).Add(50 * time.Second))
	rs := e.runs(j.ID)
	require.Len(t, rs, 1)
	require.Len(t, e.tasks("cron:"+j.ID), 1)

	e.finishTask(rs[0].TaskID, sdk.TaskSucceeded)
	e.tickAt(minute(2))
	rs = e.runs(j.ID)
	require.Len(t, rs, 2)
	require.Equal(t, scheduler.RunOK, rs[1].Status)
	require.Equal(t, scheduler.RunRunning, rs[0].Status)
}

func TestClockJumpFiresPerCatchUpWindow(t *testing.T) {
	for _, tc := range []struct {
		window      string
		run, missed int
	}{
		{"", 1, 119},
		{"10m", 10, 110},
	} {
		t.Run("window="+tc.window, func(t *testing.T) {
			e := newLoopEnv(t, scheduler.Config{})
			in := everyMinute("jump")
			in.Overlap, in.CatchUpWindow = "allow_all", tc.window
			j := e.add(in)
			e.tickAt(minute(1).Add(5 * time.Second))
			require.Len(t, e.runs(j.ID), 1)
			// Two hours pass in one step (a suspend, a clock jump).
			e.tickAt(minute(1).Add(2*time.Hour + 5*time.Second))
			e.tickAt(minute(1).Add(2*time.Hour + 6*time.Second))
			st := byStatus(e.runs(j.ID))
			require.Equal(t, 1+tc.run, st[scheduler.RunRunning])
			require.Equal(t, tc.missed, st[scheduler.RunMissed])
			for _, r := range e.runs(j.ID) {
				require.Equal(t, scheduler.TriggerSchedule, r.Trigger, "%+v", r)
				require.Equal(t, scheduler.RunID(j.ID, r.Scheduled), r.ID)
			}
			require.Len(t, e.tasks("cron:"+j.ID), 1+tc.run)
			got, err := e.sched.Jobs().Get(j.ID)
			require.NoError(t, err)
			require.Equal(t, minute(2).Add(2*time.Hour), got.State.NextRun)
		})
	}
}

func TestOverlapSkipRecordsSkipped(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(everyMinute("skip"))
	e.tickAt(minute(1))
	e.tickAt(minute(2))
	rs := e.runs(j.ID)
	require.Len(t, rs, 2)
	require.Equal(t, scheduler.RunSkipped, rs[0].Status)
	require.Equal(t, scheduler.RunRunning, rs[1].Status)
	require.Len(t, e.tasks("cron:"+j.ID), 1)
}

func TestOverlapAllowAllStarts(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	in := everyMinute("all")
	in.Overlap = "allow_all"
	j := e.add(in)
	e.tickAt(minute(1))
	e.tickAt(minute(2))
	require.Equal(t, map[string]int{scheduler.RunRunning: 2}, byStatus(e.runs(j.ID)))
	require.Len(t, e.tasks("cron:"+j.ID), 2)
}

func TestOverlapBufferOneStartsWhenActiveEnds(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	in := everyMinute("buf")
	in.Overlap = "buffer_one"
	j := e.add(in)
	e.tickAt(minute(1))
	e.tickAt(minute(2))
	e.tickAt(minute(3))
	require.Equal(t, map[string]int{scheduler.RunRunning: 1, scheduler.RunBuffered: 1, scheduler.RunSkipped: 1}, byStatus(e.runs(j.ID)))
	first := e.runs(j.ID)[2]
	e.finishTask(first.TaskID, sdk.TaskSucceeded)
	e.tickAt(minute(3).Add(time.Second))
	rs := e.runs(j.ID)
	require.Equal(t, map[string]int{scheduler.RunOK: 1, scheduler.RunRunning: 1, scheduler.RunSkipped: 1}, byStatus(rs))
	require.Equal(t, minute(2), rs[1].Scheduled)
	require.Equal(t, scheduler.RunRunning, rs[1].Status)
}

func TestOverlapCancelOther(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	in := everyMinute("cancel")
	in.Overlap = "cancel_other"
	j := e.add(in)
	e.tickAt(minute(1))
	first := e.runs(j.ID)[0]
	e.tickAt(minute(2))
	task, err := e.eng.GetTask(first.TaskID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskCancelled, task.Status) // queued: cancelled at once
	e.tickAt(minute(2).Add(time.Second))
	rs := e.runs(j.ID)
	require.Equal(t, scheduler.RunRunning, rs[0].Status)
	require.Equal(t, scheduler.RunCancelled, rs[1].Status)
	got, err := e.sched.Jobs().Get(j.ID)
	require.NoError(t, err)
	require.Zero(t, got.State.ConsecutiveErrors)
}

func TestPipelineJobWaitingHoldsTheJob(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	dir := t.TempDir()
	file := filepath.Join(dir, "deploy.lobster")
	require.NoError(t, os.WriteFile(file, []byte("steps: []\n"), 0o600))
	j := e.add(scheduler.JobInput{Name: "deploy", Schedule: schedule.Flags{Cron: "* * * * *"}, Pipeline: file, ArgsJSON: `{"env":"prod"}`})
	e.tickAt(minute(1))
	rs := e.runs(j.ID)
	require.Len(t, rs, 1)
	require.NotEmpty(t, rs[0].FlowID)
	f, err := e.eng.GetFlow(rs[0].FlowID)
	require.NoError(t, err)
	require.Equal(t, "pipeline", f.ControllerID)
	require.Equal(t, "cron:"+j.ID, f.OwnerKey)
	var state map[string]any
	require.NoError(t, json.Unmarshal(f.State, &state))
	require.Equal(t, file, state["file"])
	require.Equal(t, map[string]any{"env": "prod"}, state["args"])
	require.Equal(t, dir, state["cwd"])
	require.Contains(t, state["env"], "FLOWGATE_CRON_RUN_ID")

	// The flow stops at an approval gate: the job is held.
	f, err = e.eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{CurrentStep: "approve"})
	require.NoError(t, err)
	e.tickAt(minute(2))
	e.tickAt(minute(3))
	require.Equal(t, map[string]int{scheduler.RunRunning: 1, scheduler.RunSkipped: 2}, byStatus(e.runs(j.ID)))

	_, err = e.eng.Finish(f.ID, f.Revision, engine.EndInput{})
	require.NoError(t, err)
	e.tickAt(minute(4))
	rs = e.runs(j.ID)
	require.Equal(t, map[string]int{scheduler.RunOK: 1, scheduler.RunRunning: 1, scheduler.RunSkipped: 2}, byStatus(rs))
	require.NotEqual(t, f.ID, rs[0].FlowID)
}

func TestFailuresBackOffAndDisable(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(everyMinute("flaky"))
	at := minute(1)
	for n := 1; n <= schedule.DisableAfter; n++ {
		e.tickAt(at)
		rs := e.runs(j.ID)
		require.Len(t, rs, n)
		require.Equal(t, scheduler.RunRunning, rs[0].Status, "failure %d", n)
		e.finishTask(rs[0].TaskID, sdk.TaskFailed)
		e.tickAt(at)
		got, err := e.sched.Jobs().Get(j.ID)
		require.NoError(t, err)
		require.Equal(t, n, got.State.ConsecutiveErrors)
		require.Equal(t, scheduler.RunError, got.State.LastStatus)
		if n == schedule.DisableAfter {
			require.False(t, got.Enabled)
			require.Zero(t, got.State.NextRun)
			require.Equal(t, &scheduler.Toggle{By: scheduler.ByScheduler, At: got.UpdatedAt.UTC()}, got.LastToggle, "the job says the scheduler disabled it")
			break
		}
		// The next run is the first scheduled time at or after the backoff.
		earliest := at.Add(schedule.FailureBackoff(n))
		require.False(t, got.State.NextRun.Before(earliest), "failure %d: next %s before %s", n, got.State.NextRun, earliest)
		require.True(t, got.State.NextRun.Add(-time.Minute).Before(earliest), "failure %d: next %s too late", n, got.State.NextRun)
		// Nothing fires inside the backoff.
		e.tickAt(got.State.NextRun.Add(-time.Second))
		require.Len(t, e.runs(j.ID), n)
		at = got.State.NextRun
	}
	st, err := e.sched.Status()
	require.NoError(t, err)
	require.Len(t, st, 1)
	require.Contains(t, st[0].DisabledReason, "10 consecutive failures")
	// Disabled: nothing fires any more.
	e.tickAt(at.Add(3 * time.Hour))
	require.Len(t, e.runs(j.ID), schedule.DisableAfter)
}

func TestDeleteAfterRunRemovesOneShotAfterSuccess(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(scheduler.JobInput{Name: "once", Schedule: schedule.Flags{At: "+10m"}, Command: "echo once", DeleteAfterRun: true})
	e.tickAt(t0.Add(10 * time.Minute))
	rs := e.runs(j.ID)
	require.Len(t, rs, 1)
	e.tickAt(t0.Add(11 * time.Minute))
	require.Len(t, e.runs(j.ID), 1) // fires once
	_, err := e.sched.Jobs().Get(j.ID)
	require.NoError(t, err) // not removed while running
	e.finishTask(rs[0].TaskID, sdk.TaskSucceeded)
	e.tickAt(t0.Add(12 * time.Minute))
	_, err = e.sched.Jobs().Get(j.ID)
	require.True(t, errors.Is(err, scheduler.ErrJobNotFound), "%v", err)
	rs = e.runs(j.ID)
	require.Equal(t, scheduler.RunOK, rs[0].Status) // history kept by id

	// A one-shot that fails is kept, for the operator to see.
	k := e.add(scheduler.JobInput{Name: "once-bad", Schedule: schedule.Flags{At: "+10m"}, Command: "false", DeleteAfterRun: true})
	e.tickAt(t0.Add(22 * time.Minute))
	e.finishTask(e.runs(k.ID)[0].TaskID, sdk.TaskFailed)
	e.tickAt(t0.Add(23 * time.Minute))
	got, err := e.sched.Jobs().Get(k.ID)
	require.NoError(t, err)
	require.Equal(t, scheduler.RunError, got.State.LastStatus)
	require.Zero(t, got.State.NextRun)
}

func TestHistoryBounded(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{HistoryMax: 5})
	j := e.add(everyMinute("busy"))
	for m := 1; m <= 10; m++ {
		e.tickAt(minute(m))
	}
	rs := e.runs(j.ID)
	require.Len(t, rs, 5)
	require.Equal(t, minute(10), rs[0].Scheduled)
	// The open run is never pruned, however old.
	require.Equal(t, minute(1), rs[4].Scheduled)
	require.Equal(t, scheduler.RunRunning, rs[4].Status)

	// A week later: records older than 7 days go, and a flood of missed
	// times is recorded only up to the bound.
	e.finishTask(rs[4].TaskID, sdk.TaskSucceeded)
	later := minute(10).Add(8 * 24 * time.Hour)
	e.tickAt(later)
	rs = e.runs(j.ID)
	require.Len(t, rs, 5)
	for _, r := range rs {
		require.True(t, r.Scheduled.After(later.Add(-7*24*time.Hour)), "kept %s", r.Scheduled)
	}
	require.Equal(t, scheduler.RunRunning, rs[0].Status)
	require.Equal(t, later, rs[0].Scheduled)
}

func TestStartStop(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{Tick: time.Millisecond})
	e.clock.set(minute(1))
	j := e.add(everyMinute("live"))
	e.clock.set(minute(2))
	require.NoError(t, e.sched.Start(context.Background()))
	require.Eventually(t, func() bool {
		rs, err := e.sched.Runs(j.ID, 0)
		return err == nil && len(rs) == 1
	}, 5*time.Second, time.Millisecond)
	require.NoError(t, e.sched.Stop(context.Background()))
	require.NoError(t, e.sched.Stop(context.Background()))
}

func TestRemovedJobStopsAndHistoryStays(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(everyMinute("gone"))
	e.tickAt(minute(1))
	rs := e.runs(j.ID)
	require.Len(t, rs, 1)
	_, err := e.sched.Jobs().Remove(j.ID)
	require.NoError(t, err)
	e.tickAt(minute(2)) // the open run is still followed
	e.finishTask(rs[0].TaskID, sdk.TaskSucceeded)
	e.tickAt(minute(3))
	e.tickAt(minute(4))
	rs = e.runs(j.ID)
	require.Len(t, rs, 1)
	require.Equal(t, scheduler.RunOK, rs[0].Status)
	st, err := e.sched.Status()
	require.NoError(t, err)
	require.Empty(t, st)
}

func TestOverlapBufferAllRunsEveryTimeInOrder(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	in := everyMinute("all")
	in.Overlap = "buffer_all"
	j := e.add(in)
	for m := 1; m <= 4; m++ {
		e.tickAt(minute(m))
	}
	require.Equal(t, map[string]int{scheduler.RunRunning: 1, scheduler.RunBuffered: 3}, byStatus(e.runs(j.ID)))
	for i := 1; i <= 4; i++ {
		rs := e.runs(j.ID)
		var active []scheduler.Run
		for _, r := range rs {
			if r.Status == scheduler.RunRunning {
				active = append(active, r)
			}
		}
		require.Len(t, active, 1, "one at a time")
		require.Equal(t, minute(i), active[0].Scheduled, "oldest first")
		e.finishTask(active[0].TaskID, sdk.TaskSucceeded)
		e.tickAt(minute(4).Add(time.Duration(i) * time.Second))
	}
	require.Equal(t, map[string]int{scheduler.RunOK: 4}, byStatus(e.runs(j.ID)))
}

// TestLateTickRunsEveryTimeDueSinceTheLast: a tick that comes late (here
// 1.2 s after the last, for an --every 1s job) sees two times due; both
// fell due while the loop ran, so both run, with no catch-up window.
// Before, the earlier was recorded missed, as after downtime. A pass
// more than five ticks after the last is downtime: only the latest time
// runs and the others are missed, as before; and so is the first pass,
// and the first after a start.
func TestLateTickRunsEveryTimeDueSinceTheLast(t *testing.T) {
	t.Parallel()
	env := newLoopEnv(t, scheduler.Config{})
	j := env.add(scheduler.JobInput{Name: "every-second", Schedule: schedule.Flags{Every: "1s"}, Command: "echo hi", Overlap: "allow_all"})
	env.tickAt(t0.Add(1900 * time.Millisecond))
	env.tickAt(t0.Add(3100 * time.Millisecond))
	require.Equal(t, map[string]int{scheduler.RunRunning: 3}, byStatus(env.runs(j.ID)), "a late tick let a time due pass")
	env.tickAt(t0.Add(9100 * time.Millisecond))
	require.Equal(t, map[string]int{scheduler.RunRunning: 4, scheduler.RunMissed: 5}, byStatus(env.runs(j.ID)), "downtime")

	// Started (after a Stop, or a gateway's restart), its first pass
	// follows downtime: 10s is missed, 11s runs.
	env.clock.set(t0.Add(11100 * time.Millisecond))
	require.NoError(t, env.sched.Start(context.Background()))
	t.Cleanup(func() { env.sched.Stop(context.Background()) })
	want := map[string]int{scheduler.RunRunning: 5, scheduler.RunMissed: 6}
	require.Eventually(t, func() bool { return maps.Equal(want, byStatus(env.runs(j.ID))) }, 5*time.Second, time.Millisecond,
		"the first pass after a start did not count the time before as downtime")
}
