package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
)

// TestTopOfHourJobFiresAtItsStaggeredTime: an hourly job fires at the
// hour plus the offset its id picks, not at :00; a new scheduler on the
// same store (a restart, another gateway) computes the same time; and
// catch-up after downtime runs and records staggered times too.
func TestTopOfHourJobFiresAtItsStaggeredTime(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	e.clock.set(time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC))
	j := e.add(scheduler.JobInput{Name: "hourly", Schedule: schedule.Flags{Cron: "0 * * * *"}, Command: "echo hi", Overlap: "allow_all"})
	off := schedule.StaggerOffset(j.ID, schedule.DefaultStagger)
	at := func(h int) time.Time { return time.Date(2026, 3, 2, h, 0, 0, 0, time.UTC).Add(off) }
	require.Equal(t, at(10), j.State.NextRun, "the next hour, staggered")

	if off > 0 {
		e.tickAt(at(10).Add(-time.Second))
		require.Empty(t, e.runs(j.ID), "not before its offset")
	}
	e.sched = scheduler.New(e.eng, scheduler.Config{Now: e.clock.now})
	e.tickAt(at(10))
	rs := e.runs(j.ID)
	require.Len(t, rs, 1)
	require.True(t, at(10).Equal(rs[0].Scheduled), "scheduled %s", rs[0].Scheduled)

	// Down for three hours: the latest time runs, the others are missed,
	// all at the staggered times.
	e.tickAt(at(13).Add(time.Minute))
	got := map[string]time.Time{}
	for _, r := range e.runs(j.ID) {
		got[r.Status+r.Scheduled.Format("15")] = r.Scheduled
	}
	for _, k := range []string{"missed11", "missed12", "running13"} {
		require.Contains(t, got, k)
		require.Equal(t, off, got[k].Sub(got[k].Truncate(time.Hour)), k)
	}
	job, err := e.sched.Jobs().Get(j.ID)
	require.NoError(t, err)
	require.Equal(t, at(14), job.State.NextRun)
}

// TestBackfillUsesTheStaggeredTimes: a backfill runs the times the job
// would have fired at, offset included, so its runs and scheduled runs
// name the same instants and never repeat each other.
func TestBackfillUsesTheStaggeredTimes(t *testing.T) {
	e := newLoopEnv(t, scheduler.Config{})
	j := e.add(scheduler.JobInput{Name: "daily", Schedule: schedule.Flags{Cron: "@daily", Stagger: "1h"}, Command: "true"})
	off := schedule.StaggerOffset(j.ID, time.Hour)
	from, to := time.Date(2026, 2, 26, 0, 0, 0, 0, time.UTC).Add(off), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(off)
	plan, err := e.sched.Backfill(j.ID, scheduler.BackfillOptions{From: from, To: to, DryRun: true})
	require.NoError(t, err)
	require.Len(t, plan, 3)
	for i, r := range plan {
		require.True(t, time.Date(2026, 2, 27+i, 0, 0, 0, 0, time.UTC).Add(off).Equal(r.Scheduled), "run %d at %s", i, r.Scheduled)
	}
}

// TestEditKeepsOrChangesTheStagger: a new --cron keeps the job's
// --stagger; --exact alone puts the times back as written, and
// --stagger alone sets a window again.
func TestEditKeepsOrChangesTheStagger(t *testing.T) {
	c := &jobClock{t: jt0.Add(-30 * time.Minute)}
	js := newJobs(t, c)
	j, err := js.Add(scheduler.JobInput{Name: "job", Schedule: schedule.Flags{Cron: "0 * * * *", Stagger: "20m"}, Command: "true"})
	require.NoError(t, err)
	off := schedule.StaggerOffset(j.ID, 20*time.Minute)
	require.Equal(t, jt0.Add(off), j.State.NextRun)

	e, err := js.Edit(j.ID, scheduler.JobPatch{Cron: str("0 */5 * * *")})
	require.NoError(t, err)
	require.Equal(t, scheduler.Duration(20*time.Minute), e.Schedule.Stagger, "a new --cron keeps --stagger")
	require.Equal(t, jt0.Add(3*time.Hour+off), e.State.NextRun, "15:00 plus the offset")

	e, err = js.Edit(j.ID, scheduler.JobPatch{Exact: boolp(true)})
	require.NoError(t, err)
	require.True(t, e.Schedule.Exact)
	require.Zero(t, e.Schedule.Stagger)
	require.Equal(t, jt0.Add(3*time.Hour), e.State.NextRun, "--exact: the times as written")

	e, err = js.Edit(j.ID, scheduler.JobPatch{Stagger: str("10m")})
	require.NoError(t, err)
	require.False(t, e.Schedule.Exact, "--stagger replaces --exact")
	require.Equal(t, jt0.Add(3*time.Hour+schedule.StaggerOffset(j.ID, 10*time.Minute)), e.State.NextRun)

	before, err := js.Get(j.ID)
	require.NoError(t, err)
	_, err = js.Edit(j.ID, scheduler.JobPatch{Every: str("1h"), Stagger: str("5m")})
	require.ErrorContains(t, err, "--stagger: applies only to --cron")
	_, err = js.Edit(j.ID, scheduler.JobPatch{Stagger: str("5m"), Exact: boolp(true)})
	require.ErrorContains(t, err, "--exact: cannot be combined with --stagger")
	after, err := js.Get(j.ID)
	require.NoError(t, err)
	require.Equal(t, before, after, "a refused edit changes nothing")
}
