package scheduler_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

func TestRunNowStartsAtOnceAndLeavesTheScheduleAlone(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(scheduler.JobInput{Name: "hourly", Schedule: schedule.Flags{Cron: "0 * * * *", Exact: true}, Command: "echo hi"})
	e.tickAt(t0)

	r, err := e.sched.RunNow("hourly", "ann")
	require.NoError(t, err)
	require.Equal(t, scheduler.RunRunning, r.Status)
	require.Equal(t, scheduler.TriggerManual, r.Trigger)
	require.Equal(t, "ann", r.By, "the run names who asked for it")
	require.Equal(t, t0, r.Scheduled)
	require.Equal(t, "cron:"+j.ID+":"+t0.Format(time.RFC3339Nano), r.ID)
	require.NotEmpty(t, r.TaskID)
	task, err := e.eng.GetTask(r.TaskID)
	require.NoError(t, err)
	require.Equal(t, r.ID, task.IdempotencyKey)
	require.Equal(t, scheduler.TriggerManual, task.Spec.Env["FLOWGATE_CRON_TRIGGER"])

	got, err := e.sched.Jobs().Get(j.ID)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 3, 2, 11, 0, 0, 0, time.UTC), got.State.NextRun, "a manual run does not move the schedule")

	// The job's overlap policy (skip) applies: a second run while the
	// first is active is recorded as skipped, with why.
	r2, err := e.sched.RunNow(j.ID, "")
	require.NoError(t, err)
	require.Equal(t, scheduler.RunSkipped, r2.Status)
	require.Contains(t, r2.Error, "overlap skip")
	require.NotEqual(t, r.ID, r2.ID, "two runs asked for in the same instant get distinct ids")

	e.finishTask(r.TaskID, sdk.TaskSucceeded)
	e.tickAt(t0.Add(time.Second))
	require.Equal(t, map[string]int{scheduler.RunOK: 1, scheduler.RunSkipped: 1}, byStatus(e.runs(j.ID)))

	// The scheduled time still fires at 11:00.
	e.tickAt(time.Date(2026, 3, 2, 11, 0, 1, 0, time.UTC))
	rs := e.runs(j.ID)
	require.Equal(t, scheduler.TriggerSchedule, rs[0].Trigger)
	require.Equal(t, scheduler.RunRunning, rs[0].Status)
	require.Empty(t, rs[0].By, "a scheduled time is asked for by nobody")
	require.Equal(t, "ann", rs[len(rs)-1].By, "the stored run keeps who asked")
}

func TestRunNowRefusals(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	_, err := e.sched.RunNow("nope", "")
	require.ErrorIs(t, err, scheduler.ErrJobNotFound)
	e.add(scheduler.JobInput{Name: "off", Schedule: schedule.Flags{Every: "1h"}, Command: "true", Disabled: true})
	_, err = e.sched.RunNow("off", "")
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.Contains(t, err.Error(), "cron enable")
}

// A one-shot with delete_after_run is removed only by a run that actually
// ran and succeeded: a skipped or failed run leaves it.
func TestRunNowOneShotDeletedOnlyAfterARealRun(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(scheduler.JobInput{Name: "once", Schedule: schedule.Flags{At: "+2h"}, Command: "true", DeleteAfterRun: true})
	r, err := e.sched.RunNow(j.ID, "")
	require.NoError(t, err)
	skipped, err := e.sched.RunNow(j.ID, "")
	require.NoError(t, err)
	require.Equal(t, scheduler.RunSkipped, skipped.Status)
	e.tickAt(t0.Add(time.Second))
	_, err = e.sched.Jobs().Get(j.ID)
	require.NoError(t, err, "a skipped run must not delete the job")

	e.finishTask(r.TaskID, sdk.TaskFailed)
	e.tickAt(t0.Add(2 * time.Second))
	_, err = e.sched.Jobs().Get(j.ID)
	require.NoError(t, err, "a failed run must not delete the job")

	r, err = e.sched.RunNow(j.ID, "")
	require.NoError(t, err)
	e.finishTask(r.TaskID, sdk.TaskSucceeded)
	e.tickAt(t0.Add(3 * time.Second))
	_, err = e.sched.Jobs().Get(j.ID)
	require.ErrorIs(t, err, scheduler.ErrJobNotFound)
	require.Len(t, e.runs(j.ID), 3, "the history stays, found by id")
}

func TestBackfillOverDSTObeysOverlapAndNeverRepeats(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	// New York springs forward on 2026-03-08: 02:30 does not exist that
	// night and runs at 03:00 (--dst shift).
	e.clock.set(time.Date(2026, 3, 12, 12, 0, 0, 0, time.UTC))
	j := e.add(scheduler.JobInput{Name: "nightly", Schedule: schedule.Flags{Cron: "30 2 * * *", TZ: "America/New_York"}, Command: "true"})
	ny, _ := time.LoadLocation("America/New_York")
	from, to := time.Date(2026, 3, 6, 12, 0, 0, 0, ny), time.Date(2026, 3, 10, 12, 0, 0, 0, ny)
	want := []time.Time{
		time.Date(2026, 3, 7, 2, 30, 0, 0, ny),
		time.Date(2026, 3, 8, 3, 0, 0, 0, ny), // the gap, shifted
		time.Date(2026, 3, 9, 2, 30, 0, 0, ny),
		time.Date(2026, 3, 10, 2, 30, 0, 0, ny),
	}

	plan, err := e.sched.Backfill(j.ID, scheduler.BackfillOptions{From: from, To: to, DryRun: true})
	require.NoError(t, err)
	require.Len(t, plan, len(want))
	for i, r := range plan {
		require.True(t, want[i].Equal(r.Scheduled), "time %d: %s, want %s", i, r.Scheduled, want[i])
		require.Equal(t, scheduler.RunPlanned, r.Status)
	}
	require.Empty(t, e.runs(j.ID), "a dry run records nothing")

	// With the job's own policy, skip, the first time starts and the rest
	// overlap it.
	got, err := e.sched.Backfill(j.ID, scheduler.BackfillOptions{From: from, To: to})
	require.NoError(t, err)
	statuses := []string{}
	for _, r := range got {
		statuses = append(statuses, r.Status)
		require.Equal(t, scheduler.TriggerBackfill, r.Trigger)
	}
	require.Equal(t, []string{scheduler.RunRunning, scheduler.RunSkipped, scheduler.RunSkipped, scheduler.RunSkipped}, statuses)

	// A second backfill over the same range runs nothing again, even with
	// a policy that would.
	again, err := e.sched.Backfill(j.ID, scheduler.BackfillOptions{From: from, To: to, Overlap: schedule.OverlapAllowAll})
	require.NoError(t, err)
	require.Len(t, again, 4)
	require.Len(t, e.tasks("cron:"+j.ID), 1)

	// The next night's scheduled run is untouched by the backfill.
	job, err := e.sched.Jobs().Get(j.ID)
	require.NoError(t, err)
	require.True(t, time.Date(2026, 3, 13, 2, 30, 0, 0, ny).Equal(job.State.NextRun), "next run %s", job.State.NextRun)
}

func TestBackfillBufferAllRunsEachInTurn(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	e.clock.set(minute(30))
	j := e.add(everyMinute("each"))
	got, err := e.sched.Backfill(j.ID, scheduler.BackfillOptions{From: minute(0), To: minute(3), Overlap: schedule.OverlapBufferAll, By: "ann"})
	require.NoError(t, err)
	require.Equal(t, []string{scheduler.RunRunning, scheduler.RunBuffered, scheduler.RunBuffered}, []string{got[0].Status, got[1].Status, got[2].Status})
	require.Equal(t, []string{"ann", "ann", "ann"}, []string{got[0].By, got[1].By, got[2].By}, "each run names who asked for the backfill")
	for i := range 3 {
		rs := e.runs(j.ID)
		var active *scheduler.Run
		for k := range rs {
			if rs[k].Status == scheduler.RunRunning {
				active = &rs[k]
			}
		}
		require.NotNil(t, active, "round %d", i)
		require.True(t, minute(i+1).Equal(active.Scheduled), "oldest first")
		e.finishTask(active.TaskID, sdk.TaskSucceeded)
		e.tickAt(minute(30).Add(time.Duration(i+1) * time.Second))
	}
	require.Equal(t, map[string]int{scheduler.RunOK: 3}, byStatus(e.runs(j.ID)))
}

func TestBackfillRefusals(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(everyMinute("x"))
	for _, c := range []struct {
		o    scheduler.BackfillOptions
		flag string
	}{
		{scheduler.BackfillOptions{To: t0}, "--from"},
		{scheduler.BackfillOptions{From: t0, To: t0.Add(-time.Hour)}, "--to"},
		{scheduler.BackfillOptions{From: t0.Add(-time.Hour), To: t0.Add(time.Hour)}, "--to"},
		{scheduler.BackfillOptions{From: t0.Add(-24 * 365 * 10 * time.Hour), To: t0}, "--from"},
	} {
		_, err := e.sched.Backfill(j.ID, c.o)
		var fe *schedule.FlagError
		require.True(t, errors.As(err, &fe), "%+v: %v", c.o, err)
		require.Equal(t, c.flag, fe.Flag)
	}
	require.Empty(t, e.runs(j.ID))
}

func TestRunEnvCarriesSessionAndIdentity(t *testing.T) {
	sessions := t.TempDir()
	e := newLoopEnv(t, scheduler.Config{SessionsDir: sessions})
	named := e.add(scheduler.JobInput{Name: "named", Schedule: schedule.Flags{Cron: "* * * * *"}, Command: "true", Session: "session:research"})
	iso := e.add(scheduler.JobInput{Name: "iso", Schedule: schedule.Flags{Cron: "* * * * *"}, Command: "true"})
	file := filepath.Join(t.TempDir(), "p.lobster")
	require.NoError(t, os.WriteFile(file, []byte("name: p\nsteps:\n  - id: a\n    run: echo hi\n"), 0o600))
	pipe := e.add(scheduler.JobInput{Name: "pipe", Schedule: schedule.Flags{Cron: "* * * * *"}, Pipeline: file, Session: "session:research"})
	e.tickAt(minute(1))

	env := e.tasks("cron:" + named.ID)[0].Spec.Env
	require.Equal(t, "research", env["FLOWGATE_SESSION"])
	require.Equal(t, filepath.Join(sessions, "research"), env["FLOWGATE_SESSION_DIR"])
	require.DirExists(t, env["FLOWGATE_SESSION_DIR"])
	require.Equal(t, named.ID, env["FLOWGATE_CRON_JOB_ID"])
	require.Equal(t, "named", env["FLOWGATE_CRON_JOB_NAME"])
	require.Equal(t, scheduler.RunID(named.ID, minute(1)), env["FLOWGATE_CRON_RUN_ID"])
	require.Equal(t, scheduler.TriggerSchedule, env["FLOWGATE_CRON_TRIGGER"])
	spec := e.tasks("cron:" + named.ID)[0].Spec
	require.Equal(t, env["FLOWGATE_SESSION_DIR"], spec.Cwd, "a named session's command runs in its directory")
	require.Equal(t, &sdk.SessionSpec{Name: "research"}, spec.Session, "and joins its lineage")

	env = e.tasks("cron:" + iso.ID)[0].Spec.Env
	require.Equal(t, scheduler.RunID(iso.ID, minute(1)), env["FLOWGATE_SESSION"], "an isolated run's session is its own")
	require.NotContains(t, env, "FLOWGATE_SESSION_DIR")
	require.Nil(t, e.tasks("cron:" + iso.ID)[0].Spec.Session, "an isolated run has no lineage")

	page, err := e.eng.ListFlows(engine.FlowFilter{OwnerKey: "cron:" + pipe.ID})
	require.NoError(t, err)
	require.Len(t, page.Flows, 1)
	var state struct {
		Env     map[string]string `json:"env"`
		Session string            `json:"session"`
	}
	require.NoError(t, json.Unmarshal(page.Flows[0].State, &state))
	require.Equal(t, "research", state.Env["FLOWGATE_SESSION"])
	require.Equal(t, "research", state.Session, "the lineage its command steps belong to")
	require.Equal(t, pipe.ID, state.Env["FLOWGATE_CRON_JOB_ID"])
}

func TestLostTaskIsAnInterruptedRun(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(everyMinute("lost"))
	e.tickAt(minute(1))
	task := e.tasks("cron:" + j.ID)[0]
	e.finishTask(task.ID, sdk.TaskLost)
	e.tickAt(minute(1).Add(time.Second))
	rs := e.runs(j.ID)
	require.Equal(t, scheduler.RunInterrupted, rs[0].Status)
	got, err := e.sched.Jobs().Get(j.ID)
	require.NoError(t, err)
	require.Equal(t, 1, got.State.ConsecutiveErrors)
}

// The due index and the open-runs index agree with the records through
// adds, edits, disables, removals, runs and ends.
func TestIndexesFollowTheRecords(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	a := e.add(everyMinute("a"))
	b := e.add(everyMinute("b"))
	c := e.add(scheduler.JobInput{Name: "c", Schedule: schedule.Flags{Every: "1h"}, Command: "true"})
	check := func() {
		t.Helper()
		jobs, err := e.sched.Jobs().List(true)
		require.NoError(t, err)
		want := map[string]bool{}
		for _, j := range jobs {
			if j.Enabled && !j.State.NextRun.IsZero() {
				want[j.ID] = true
			}
		}
		got := map[string]bool{}
		require.NoError(t, e.st.View(t.Context(), func(tx store.ReadTx) error {
			return tx.Scan("cron/due/", store.ScanOptions{}, func(it store.Item) bool {
				id := it.Key[strings.LastIndexByte(it.Key, '/')+1:]
				require.False(t, got[id], "job %s is in the due index twice", id)
				got[id] = true
				return true
			})
		}))
		require.Equal(t, want, got)
	}
	check()
	e.tickAt(minute(1))
	check()
	_, err := e.sched.Jobs().SetEnabled(b.ID, false, "ann")
	require.NoError(t, err)
	check()
	_, err = e.sched.Jobs().Edit(c.ID, scheduler.JobPatch{Every: str("2h")})
	require.NoError(t, err)
	check()
	_, err = e.sched.Jobs().Remove(a.ID)
	require.NoError(t, err)
	check()
	// a's open run is still followed, and ends.
	task := e.tasks("cron:" + a.ID)[0]
	e.finishTask(task.ID, sdk.TaskSucceeded)
	e.tickAt(minute(1).Add(time.Second))
	require.Equal(t, scheduler.RunOK, e.runs(a.ID)[0].Status)
	var open int
	require.NoError(t, e.st.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("cron/open/", store.ScanOptions{}, func(store.Item) bool { open++; return true })
	}))
	require.Equal(t, 1, open, "only b's run is open")
	check()

	// Reindex rebuilds both indexes from the records, dropping strays.
	require.NoError(t, e.st.Update(t.Context(), func(tx store.Tx) error {
		if _, err := tx.Put("cron/due/00000000000000000001/ghost", []byte{}); err != nil {
			return err
		}
		if _, err := tx.Put("cron/open/ghost", []byte{}); err != nil {
			return err
		}
		return tx.Delete("cron/open/" + b.ID)
	}))
	require.NoError(t, e.sched.Reindex())
	check()
	open = 0
	require.NoError(t, e.st.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("cron/open/", store.ScanOptions{}, func(it store.Item) bool {
			require.Equal(t, "cron/open/"+b.ID, it.Key)
			open++
			return true
		})
	}))
	require.Equal(t, 1, open)
}
