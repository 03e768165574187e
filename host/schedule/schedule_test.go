package schedule_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/schedule"
)

// wallLayout renders fire times as wall clock plus zone abbreviation, so the
// expectations below read like a calendar.
const wallLayout = "2006-01-02 15:04:05 MST"

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

// wall parses a wall time written in wallLayout without the abbreviation,
// taking the first occurrence of a repeated time.
func wall(t *testing.T, loc *time.Location, v string) time.Time {
	t.Helper()
	ts, err := time.ParseInLocation("2006-01-02 15:04:05", v, loc)
	require.NoError(t, err)
	return ts
}

func fires(s schedule.Schedule, after time.Time, n int, loc *time.Location) []string {
	var out []string
	for i := 0; i < n; i++ {
		after = s.Next(after)
		if after.IsZero() {
			break
		}
		out = append(out, after.In(loc).Format(wallLayout))
	}
	return out
}

func TestNextAcrossDST(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		sched schedule.Schedule
		after string
		want  []string
	}{
		{
			name:  "new york spring gap shift",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "30 2 * * *", TZ: "America/New_York", DST: schedule.DSTShift},
			after: "2026-03-07 00:00:00",
			want:  []string{"2026-03-07 02:30:00 EST", "2026-03-08 03:00:00 EDT", "2026-03-09 02:30:00 EDT"},
		},
		{
			name:  "new york spring gap skip",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "30 2 * * *", TZ: "America/New_York", DST: schedule.DSTSkip},
			after: "2026-03-07 00:00:00",
			want:  []string{"2026-03-07 02:30:00 EST", "2026-03-09 02:30:00 EDT", "2026-03-10 02:30:00 EDT"},
		},
		{
			name:  "new york spring gap default is shift",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "30 2 * * *", TZ: "America/New_York"},
			after: "2026-03-08 00:00:00",
			want:  []string{"2026-03-08 03:00:00 EDT", "2026-03-09 02:30:00 EDT"},
		},
		{
			name:  "new york hourly spring shift merges 02:00 into 03:00",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "0 * * * *", TZ: "America/New_York", DST: schedule.DSTShift},
			after: "2026-03-08 00:30:00",
			want:  []string{"2026-03-08 01:00:00 EST", "2026-03-08 03:00:00 EDT", "2026-03-08 04:00:00 EDT"},
		},
		{
			name:  "new york hourly spring skip",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "0 * * * *", TZ: "America/New_York", DST: schedule.DSTSkip},
			after: "2026-03-08 00:30:00",
			want:  []string{"2026-03-08 01:00:00 EST", "2026-03-08 03:00:00 EDT", "2026-03-08 04:00:00 EDT"},
		},
		{
			name:  "new york spring shift does not double with a listed 03:00",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "0 2,3 * * *", TZ: "America/New_York", DST: schedule.DSTShift},
			after: "2026-03-08 00:00:00",
			want:  []string{"2026-03-08 03:00:00 EDT", "2026-03-09 02:00:00 EDT", "2026-03-09 03:00:00 EDT"},
		},
		{
			name:  "new york fall repeat fires once",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "30 1 * * *", TZ: "America/New_York"},
			after: "2026-10-31 00:00:00",
			want:  []string{"2026-10-31 01:30:00 EDT", "2026-11-01 01:30:00 EDT", "2026-11-02 01:30:00 EST"},
		},
		{
			name:  "new york fall repeat fires once under skip too",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "30 1 * * *", TZ: "America/New_York", DST: schedule.DSTSkip},
			after: "2026-11-01 01:45:00",
			want:  []string{"2026-11-02 01:30:00 EST"},
		},
		{
			name:  "new york hourly fall runs in both 01:00 hours (a wildcard hour follows real hours)",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "0 * * * *", TZ: "America/New_York"},
			after: "2026-11-01 00:00:00",
			want:  []string{"2026-11-01 01:00:00 EDT", "2026-11-01 01:00:00 EST", "2026-11-01 02:00:00 EST"},
		},
		{
			name:  "new york six fields fall",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "0 */20 1 * * *", TZ: "America/New_York"},
			after: "2026-11-01 00:00:00",
			want:  []string{"2026-11-01 01:00:00 EDT", "2026-11-01 01:20:00 EDT", "2026-11-01 01:40:00 EDT", "2026-11-02 01:00:00 EST"},
		},
		{
			name:  "berlin spring gap shift",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "30 2 * * *", TZ: "Europe/Berlin", DST: schedule.DSTShift},
			after: "2026-03-28 00:00:00",
			want:  []string{"2026-03-28 02:30:00 CET", "2026-03-29 03:00:00 CEST", "2026-03-30 02:30:00 CEST"},
		},
		{
			name:  "berlin spring gap skip",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "30 2 * * *", TZ: "Europe/Berlin", DST: schedule.DSTSkip},
			after: "2026-03-28 00:00:00",
			want:  []string{"2026-03-28 02:30:00 CET", "2026-03-30 02:30:00 CEST", "2026-03-31 02:30:00 CEST"},
		},
		{
			name:  "berlin six fields spring shift",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "15 30 2 * * *", TZ: "Europe/Berlin", DST: schedule.DSTShift},
			after: "2026-03-29 00:00:00",
			want:  []string{"2026-03-29 03:00:00 CEST", "2026-03-30 02:30:15 CEST"},
		},
		{
			name:  "berlin six fields spring skip",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "15 30 2 * * *", TZ: "Europe/Berlin", DST: schedule.DSTSkip},
			after: "2026-03-29 00:00:00",
			want:  []string{"2026-03-30 02:30:15 CEST"},
		},
		{
			name:  "berlin fall repeat fires once",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "30 2 * * *", TZ: "Europe/Berlin"},
			after: "2026-10-24 00:00:00",
			want:  []string{"2026-10-24 02:30:00 CEST", "2026-10-25 02:30:00 CEST", "2026-10-26 02:30:00 CET"},
		},
		{
			name:  "berlin daily descriptor over fall",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "@daily", TZ: "Europe/Berlin"},
			after: "2026-10-24 12:00:00",
			want:  []string{"2026-10-25 00:00:00 CEST", "2026-10-26 00:00:00 CET"},
		},
		{
			name:  "every descriptor is elapsed time over fall",
			sched: schedule.Schedule{Kind: schedule.KindCron, Expr: "@every 90m", Anchor: time.Date(2026, 11, 1, 4, 0, 0, 0, time.UTC)},
			after: "2026-11-01 00:00:00",
			want:  []string{"2026-11-01 01:30:00 EDT", "2026-11-01 02:00:00 EST", "2026-11-01 03:30:00 EST"},
		},
		{
			name:  "every is elapsed time over spring",
			sched: schedule.Schedule{Kind: schedule.KindEvery, Every: time.Hour, Anchor: time.Date(2026, 3, 8, 5, 0, 0, 0, time.UTC)},
			after: "2026-03-08 00:00:00",
			want:  []string{"2026-03-08 01:00:00 EST", "2026-03-08 03:00:00 EDT", "2026-03-08 04:00:00 EDT"},
		},
		{
			name:  "every anchored in the future still fires before the anchor",
			sched: schedule.Schedule{Kind: schedule.KindEvery, Every: 40 * time.Minute, Anchor: time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)},
			after: "2026-03-08 00:00:00",
			want:  []string{"2026-03-08 00:20:00 EST", "2026-03-08 01:00:00 EST"},
		},
		{
			name:  "at in the future fires once",
			sched: schedule.Schedule{Kind: schedule.KindAt, At: time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC)},
			after: "2026-03-08 00:00:00",
			want:  []string{"2026-03-08 04:00:00 EDT"},
		},
		{
			name:  "at in the past never fires",
			sched: schedule.Schedule{Kind: schedule.KindAt, At: time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)},
			after: "2026-03-08 00:00:00",
			want:  nil,
		},
	}
	ny := mustZone(t, "America/New_York")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, tc.sched.Validate())
			loc := ny
			if tc.sched.TZ != "" {
				loc = mustZone(t, tc.sched.TZ)
			}
			require.Equal(t, tc.want, fires(tc.sched, wall(t, loc, tc.after), len(tc.want), loc))
		})
	}
}

func TestAtFiresOnce(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC)
	s := schedule.Schedule{Kind: schedule.KindAt, At: at}
	require.Equal(t, at, s.Next(at.Add(-time.Hour)))
	require.True(t, s.Next(at).IsZero())
	got, err := s.Between(at.Add(-time.Hour), at.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, []time.Time{at}, got)
}

func TestNextFromSecondOccurrence(t *testing.T) {
	t.Parallel()
	ny := mustZone(t, "America/New_York")
	s := schedule.Schedule{Kind: schedule.KindCron, Expr: "30 1 * * *", TZ: "America/New_York"}
	// 01:15 EST is the second pass through 01:xx; 01:30 already fired in EDT.
	after := time.Date(2026, 11, 1, 6, 15, 0, 0, time.UTC)
	require.Equal(t, "2026-11-01 01:15:00 EST", after.In(ny).Format(wallLayout))
	require.Equal(t, "2026-11-02 01:30:00 EST", s.Next(after).In(ny).Format(wallLayout))
}

func TestNextKeepsCallerLocation(t *testing.T) {
	t.Parallel()
	berlin := mustZone(t, "Europe/Berlin")
	s := schedule.Schedule{Kind: schedule.KindCron, Expr: "0 9 * * *", TZ: "America/New_York"}
	got := s.Next(time.Date(2026, 6, 1, 0, 0, 0, 0, berlin))
	require.Equal(t, berlin, got.Location())
	require.Equal(t, "2026-06-01 15:00:00 CEST", got.Format(wallLayout))
}

func TestNextInvalidOrNever(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.True(t, schedule.Schedule{Kind: schedule.KindCron, Expr: "bad"}.Next(now).IsZero())
	require.True(t, schedule.Schedule{}.Next(now).IsZero())
	_, err := schedule.Schedule{Kind: schedule.KindEvery}.Between(now, now.Add(time.Hour))
	require.ErrorIs(t, err, schedule.ErrInvalidSchedule)
}

func TestBetweenBackfillOverDST(t *testing.T) {
	t.Parallel()
	ny := mustZone(t, "America/New_York")
	berlin := mustZone(t, "Europe/Berlin")
	format := func(ts []time.Time, loc *time.Location) []string {
		var out []string
		for _, x := range ts {
			out = append(out, x.In(loc).Format(wallLayout))
		}
		return out
	}

	hourly := schedule.Schedule{Kind: schedule.KindCron, Expr: "30 * * * *", TZ: "America/New_York"}
	got, err := hourly.Between(wall(t, ny, "2026-11-01 00:00:00"), time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, []string{"2026-11-01 00:30:00 EDT", "2026-11-01 01:30:00 EDT", "2026-11-01 01:30:00 EST", "2026-11-01 02:30:00 EST"}, format(got, ny), "an hourly job runs in both repeated hours")

	for _, tc := range []struct {
		dst  schedule.DSTPolicy
		want []string
	}{
		{schedule.DSTSkip, []string{"2026-03-28 02:00:00 CET", "2026-03-30 02:00:00 CEST"}},
		{schedule.DSTShift, []string{"2026-03-28 02:00:00 CET", "2026-03-29 03:00:00 CEST", "2026-03-30 02:00:00 CEST"}},
	} {
		daily := schedule.Schedule{Kind: schedule.KindCron, Expr: "0 2 * * *", TZ: "Europe/Berlin", DST: tc.dst}
		// (from, to] : the run at exactly "to" is included, at "from" is not.
		got, err := daily.Between(wall(t, berlin, "2026-03-27 02:00:00"), wall(t, berlin, "2026-03-30 02:00:00"))
		require.NoError(t, err)
		require.Equal(t, tc.want, format(got, berlin), tc.dst)
	}
}

func TestBetweenCap(t *testing.T) {
	t.Parallel()
	s := schedule.Schedule{Kind: schedule.KindCron, Expr: "* * * * * *"}
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	got, err := s.Between(from, from.Add(2*24*time.Hour))
	require.ErrorIs(t, err, schedule.ErrTooManyTimes)
	require.Len(t, got, schedule.MaxTimes)

	got, err = schedule.Schedule{Kind: schedule.KindEvery, Every: time.Second}.Between(from, from.Add(time.Minute))
	require.NoError(t, err)
	require.Len(t, got, 60)
}

func TestNextDayOfMonthOrDayOfWeek(t *testing.T) {
	t.Parallel()
	// With both day fields restricted, either may match (Vixie cron's rule):
	// every Friday, and the 13th whatever its weekday.
	s := schedule.Schedule{Kind: schedule.KindCron, Expr: "0 9 13 * fri"}
	got, err := s.Between(time.Date(2026, 3, 28, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 18, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, []string{"04-03 09:00", "04-10 09:00", "04-13 09:00", "04-17 09:00"}, clock(got))
}
