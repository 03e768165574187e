package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/sdk"
)

func TestReconcileDeclaredJobsByName(t *testing.T) {
	t.Parallel()
	c := &jobClock{t: jt0}
	js := newJobs(t, c)
	declared := []scheduler.JobInput{
		{Name: "ping", Schedule: schedule.Flags{Every: "10s"}, Command: "echo pong"},
		{Name: "nightly", Schedule: schedule.Flags{Cron: "0 3 * * 1-5", TZ: "America/New_York"}, Command: "make report"},
	}
	added, changed, err := js.Reconcile(declared)
	require.NoError(t, err)
	require.Equal(t, [2]int{2, 0}, [2]int{added, changed})
	first, err := js.Get("nightly")
	require.NoError(t, err)

	// A restart (later, same config) adds and changes nothing.
	c.set(jt0.Add(time.Hour))
	added, changed, err = js.Reconcile(declared)
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 0}, [2]int{added, changed})
	jobs, err := js.List(true)
	require.NoError(t, err)
	require.Len(t, jobs, 2, "never duplicated")

	// An upgrade that changes a job rewrites it in place.
	declared[1].Schedule.Cron = "0 7 * * 1-5"
	added, changed, err = js.Reconcile(declared)
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 1}, [2]int{added, changed})
	now, err := js.Get("nightly")
	require.NoError(t, err)
	require.Equal(t, first.ID, now.ID, "same job, same history")
	require.Equal(t, "0 7 * * 1-5", now.Schedule.Expr)
	require.Equal(t, 7, now.State.NextRun.In(mustZone(t, "America/New_York")).Hour())

	// A declared job disabled by hand is enabled again at the next start,
	// as the config says, and its record says the config did it; then a
	// start with nothing to change leaves it alone.
	_, err = js.SetEnabled("ping", false, "ann")
	require.NoError(t, err)
	added, changed, err = js.Reconcile(declared)
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 1}, [2]int{added, changed})
	ping, err := js.Get("ping")
	require.NoError(t, err)
	require.True(t, ping.Enabled)
	require.Equal(t, &scheduler.Toggle{Enabled: true, By: scheduler.ByConfig, At: jt0.Add(time.Hour)}, ping.LastToggle)
	added, changed, err = js.Reconcile(declared)
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 0}, [2]int{added, changed}, "who last toggled a job is no change of its definition")

	// Jobs added by hand are left alone.
	_, err = js.Add(scheduler.JobInput{Name: "manual", Schedule: schedule.Flags{Every: "1m"}, Command: "true"})
	require.NoError(t, err)
	_, _, err = js.Reconcile(declared)
	require.NoError(t, err)
	_, err = js.Get("manual")
	require.NoError(t, err)
}

func TestReconcileRefusesBadDeclarations(t *testing.T) {
	t.Parallel()
	js := newJobs(t, &jobClock{t: jt0})
	_, _, err := js.Reconcile([]scheduler.JobInput{{Name: "x", Schedule: schedule.Flags{Cron: "61 * * * *"}, Command: "true"}})
	require.ErrorContains(t, err, `cron job "x"`)
	require.ErrorContains(t, err, "minute")
	_, _, err = js.Reconcile([]scheduler.JobInput{
		{Name: "twice", Schedule: schedule.Flags{Every: "1m"}, Command: "true"},
		{Name: "twice", Schedule: schedule.Flags{Every: "2m"}, Command: "true"},
	})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "declared twice")
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}
