package schedule_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/schedule"
)

func TestStaggerOffsetIsStableAndWithinTheWindow(t *testing.T) {
	t.Parallel()
	seen := map[time.Duration]bool{}
	for _, key := range []string{"a1b2c3d4e5f6", "0123456789ab", "ffffffffffff", "job-4", "job-5"} {
		off := schedule.StaggerOffset(key, 5*time.Minute)
		require.Equal(t, off, schedule.StaggerOffset(key, 5*time.Minute), "the same key, the same offset")
		require.GreaterOrEqual(t, off, time.Duration(0))
		require.Less(t, off, 5*time.Minute)
		require.Zero(t, off%time.Second, "whole seconds")
		seen[off] = true
	}
	require.Greater(t, len(seen), 1, "different keys spread")
	require.Zero(t, schedule.StaggerOffset("k", 0))
}

// TestTopOfHourSchedulesGetTheDefaultStagger: a keyed cron schedule that
// fires at minute 0 is spread over DefaultStagger unless Exact; others,
// and schedules with no key, keep their times.
func TestTopOfHourSchedulesGetTheDefaultStagger(t *testing.T) {
	t.Parallel()
	for expr, staggered := range map[string]bool{
		"0 * * * *": true, "@hourly": true, "@daily": true, "*/15 * * * *": true, "0,30 * * * *": true, "0 9 * * 1-5": true,
		"5 * * * *": false, "* * * * *": false, "@every 1h": false,
	} {
		s := schedule.Schedule{Kind: schedule.KindCron, Expr: expr, StaggerKey: "a1b2c3d4e5f6"}
		window, offset := s.Window()
		if !staggered {
			require.Zero(t, window, expr)
			continue
		}
		require.Equal(t, schedule.DefaultStagger, window, expr)
		require.Equal(t, schedule.StaggerOffset("a1b2c3d4e5f6", schedule.DefaultStagger), offset, expr)
		s.Exact = true
		window, _ = s.Window()
		require.Zero(t, window, "%s --exact", expr)
		s.Exact, s.StaggerKey = false, ""
		window, _ = s.Window()
		require.Zero(t, window, "%s with no key", expr)
	}
}

// TestStaggerMovesNextBetweenAndCatchUp: every fire, in Next, Between and
// PlanCatchUp alike, is the written time plus the key's offset.
func TestStaggerMovesNextBetweenAndCatchUp(t *testing.T) {
	t.Parallel()
	s := schedule.Schedule{Kind: schedule.KindCron, Expr: "0 * * * *", Stagger: 10 * time.Minute, StaggerKey: "a1b2c3d4e5f6"}
	off := schedule.StaggerOffset("a1b2c3d4e5f6", 10*time.Minute)
	at := func(h int) time.Time { return time.Date(2026, 5, 1, h, 0, 0, 0, time.UTC).Add(off) }

	require.Equal(t, at(10), s.Next(time.Date(2026, 5, 1, 9, 59, 0, 0, time.UTC).Add(off)))
	require.Equal(t, at(11), s.Next(at(10)), "strictly after a staggered fire: the next one")
	require.Equal(t, at(10), s.Next(at(10).Add(-time.Nanosecond)))

	between, err := s.Between(at(9), at(12))
	require.NoError(t, err)
	require.Equal(t, []time.Time{at(10), at(11), at(12)}, between)

	run, missed := schedule.PlanCatchUp(s, at(9), at(12).Add(time.Minute), 0)
	require.Equal(t, []time.Time{at(12)}, run)
	require.Equal(t, []time.Time{at(10), at(11)}, missed)
}

func TestStaggerFlags(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	s, err := schedule.ParseSchedule(schedule.Flags{Cron: "0 * * * *", Stagger: "90s"}, now)
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, s.Stagger)
	s, err = schedule.ParseSchedule(schedule.Flags{Cron: "0 * * * *", Stagger: "0"}, now)
	require.NoError(t, err)
	require.True(t, s.Exact, "--stagger 0 is --exact")
	for f, says := range map[schedule.Flags]string{
		{Cron: "0 * * * *", Stagger: "soon"}:            `--stagger: "soon" is not a duration`,
		{Cron: "0 * * * *", Stagger: "-1m"}:             "--stagger: must not be negative",
		{Cron: "0 * * * *", Stagger: "500ms"}:           "--stagger: 500ms is below the minimum of 1s",
		{Cron: "0 * * * *", Stagger: "48h"}:             "--stagger: 48h0m0s is longer than 24h0m0s, the most",
		{Cron: "0 * * * *", Stagger: "5m", Exact: true}: "--exact: cannot be combined with --stagger",
		{Every: "1h", Stagger: "5m"}:                    "--stagger: applies only to --cron, not to --every",
		{Every: "1h", Exact: true}:                      "--exact: applies only to --cron, not to --every",
	} {
		_, err := schedule.ParseSchedule(f, now)
		require.ErrorContains(t, err, says, "%+v", f)
		require.True(t, errors.Is(err, schedule.ErrInvalidSchedule))
	}
}
