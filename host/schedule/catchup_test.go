package schedule_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/schedule"
)

func clock(ts []time.Time) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.UTC().Format("01-02 15:04"))
	}
	return out
}

func TestPlanCatchUpAfterADayDown(t *testing.T) {
	t.Parallel()
	hourly := schedule.Schedule{Kind: schedule.KindCron, Expr: "0 * * * *"}
	last := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	now := time.Date(2026, 5, 2, 9, 30, 0, 0, time.UTC) // down for a day

	run, missed := schedule.PlanCatchUp(hourly, last, now, 0)
	require.Equal(t, []string{"05-02 09:00"}, clock(run), "window 0 runs the latest missed time once")
	require.Len(t, missed, 23)
	require.Equal(t, "05-01 10:00", clock(missed)[0])
	require.Equal(t, "05-02 08:00", clock(missed)[22])

	run, missed = schedule.PlanCatchUp(hourly, last, now, 2*time.Hour)
	require.Equal(t, []string{"05-02 08:00", "05-02 09:00"}, clock(run), "within the window, oldest first")
	require.Len(t, missed, 22)
	require.Equal(t, "05-02 07:00", clock(missed)[21])

	run, missed = schedule.PlanCatchUp(hourly, last, now, 48*time.Hour)
	require.Len(t, run, 24)
	require.Equal(t, "05-01 10:00", clock(run)[0])
	require.Equal(t, "05-02 09:00", clock(run)[23])
	require.Empty(t, missed)
}

func TestPlanCatchUpNeverRefires(t *testing.T) {
	t.Parallel()
	hourly := schedule.Schedule{Kind: schedule.KindCron, Expr: "0 * * * *"}
	last := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	for _, now := range []time.Time{last.Add(-time.Hour), last, last.Add(59 * time.Minute)} {
		for _, window := range []time.Duration{0, time.Hour, 48 * time.Hour} {
			run, missed := schedule.PlanCatchUp(hourly, last, now, window)
			require.Empty(t, run, "now=%s window=%s", now, window)
			require.Empty(t, missed)
		}
	}
	run, _ := schedule.PlanCatchUp(hourly, last, last.Add(time.Hour), 0)
	require.Equal(t, []string{"05-01 10:00"}, clock(run), "a due time exactly at now runs")

	run, missed := schedule.PlanCatchUp(schedule.Schedule{Kind: "bogus"}, last, last.Add(24*time.Hour), 0)
	require.Empty(t, run)
	require.Empty(t, missed)
}

// TestClockJump drives a scheduler loop with an injected clock: the machine
// sleeps at 10:05 and wakes two hours later. Exactly the due runs fire, once.
func TestClockJump(t *testing.T) {
	t.Parallel()
	quarter := schedule.Schedule{Kind: schedule.KindCron, Expr: "*/15 * * * *", TZ: "Europe/Berlin"}
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

	for _, tc := range []struct {
		window     time.Duration
		wantRun    []string
		wantMissed int
	}{
		{window: 0, wantRun: []string{"06-01 12:00"}, wantMissed: 7},
		{window: 2 * time.Hour, wantRun: []string{
			"06-01 10:15", "06-01 10:30", "06-01 10:45", "06-01 11:00",
			"06-01 11:15", "06-01 11:30", "06-01 11:45", "06-01 12:00",
		}},
	} {
		last := start // the 10:00 run has fired
		now := start.Add(5 * time.Minute)
		var fired []time.Time
		missed := 0
		tick := func() {
			run, miss := schedule.PlanCatchUp(quarter, last, now, tc.window)
			fired = append(fired, run...)
			missed += len(miss)
			if len(run) > 0 {
				last = run[len(run)-1]
			}
			if len(miss) > 0 && miss[len(miss)-1].After(last) {
				last = miss[len(miss)-1]
			}
		}
		tick()
		require.Empty(t, fired, "nothing due at 10:05")
		now = now.Add(2 * time.Hour) // suspend: the clock jumps to 12:05
		tick()
		tick() // a second look at the same instant fires nothing more
		require.Equal(t, tc.wantRun, clock(fired), "window %s", tc.window)
		require.Equal(t, tc.wantMissed, missed)
		now = now.Add(10 * time.Minute)
		tick()
		require.Equal(t, "06-01 12:15", clock(fired)[len(fired)-1], "normal firing resumes")
	}
}

func TestPlanCatchUpAcrossDST(t *testing.T) {
	t.Parallel()
	berlin := mustZone(t, "Europe/Berlin")
	daily := schedule.Schedule{Kind: schedule.KindCron, Expr: "30 2 * * *", TZ: "Europe/Berlin"}
	last := wall(t, berlin, "2026-10-24 02:30:00")
	now := wall(t, berlin, "2026-10-26 12:00:00")
	run, missed := schedule.PlanCatchUp(daily, last, now, 72*time.Hour)
	require.Empty(t, missed)
	var got []string
	for _, r := range run {
		got = append(got, r.In(berlin).Format(wallLayout))
	}
	require.Equal(t, []string{"2026-10-25 02:30:00 CEST", "2026-10-26 02:30:00 CET"}, got)
}

func TestPlanCatchUpCapsLongDowntime(t *testing.T) {
	t.Parallel()
	every := schedule.Schedule{Kind: schedule.KindEvery, Every: time.Second}
	last := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := last.Add(48 * time.Hour)
	run, missed := schedule.PlanCatchUp(every, last, now, 0)
	require.Equal(t, []time.Time{now}, run)
	require.Len(t, missed, schedule.MaxTimes)
}
