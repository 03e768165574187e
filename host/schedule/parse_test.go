package schedule_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/schedule"
)

func TestParseScheduleErrors(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		flags schedule.Flags
		flag  string
		rule  string // a substring of the rule
	}{
		{"no schedule", schedule.Flags{}, "", "one of --cron, --every or --at is required"},
		{"two schedules", schedule.Flags{Cron: "* * * * *", Every: "5m"}, "--every", "cannot be combined with --cron"},
		{"bad minute", schedule.Flags{Cron: "61 * * * *"}, "--cron", `minute field "61" is invalid`},
		{"bad hour", schedule.Flags{Cron: "0 25 * * *"}, "--cron", `hour field "25" is invalid`},
		{"bad day of month", schedule.Flags{Cron: "0 0 0 * *"}, "--cron", `day of month field "0" is invalid`},
		{"bad month", schedule.Flags{Cron: "0 0 1 13 *"}, "--cron", `month field "13" is invalid`},
		{"bad day of week", schedule.Flags{Cron: "0 0 * * funday"}, "--cron", `day of week field "funday" is invalid`},
		{"bad seconds", schedule.Flags{Cron: "70 0 0 * * *"}, "--cron", `seconds field "70" is invalid`},
		{"six-field minute", schedule.Flags{Cron: "0 60 0 * * *"}, "--cron", `minute field "60" is invalid`},
		{"field count", schedule.Flags{Cron: "1 2 3"}, "--cron", "has 3 fields; want 5"},
		{"unknown descriptor", schedule.Flags{Cron: "@fortnightly"}, "--cron", "descriptor"},
		{"sub-second every descriptor", schedule.Flags{Cron: "@every 500ms"}, "--cron", "at least 1s"},
		{"negative every descriptor", schedule.Flags{Cron: "@every -1s"}, "--cron", "at least 1s"},
		{"never matches", schedule.Flags{Cron: "0 0 30 2 *"}, "--cron", "never matches"},
		{"tz prefix", schedule.Flags{Cron: "TZ=UTC 0 0 * * *"}, "--cron", "give the zone with --tz"},
		{"unknown zone", schedule.Flags{Cron: "0 9 * * *", TZ: "Mars/Olympus"}, "--tz", `unknown zone "Mars/Olympus"`},
		{"local zone", schedule.Flags{Cron: "0 9 * * *", TZ: "Local"}, "--tz", "IANA"},
		{"unknown dst", schedule.Flags{Cron: "0 9 * * *", DST: "sometimes"}, "--dst", "use skip or shift"},
		{"tz with every", schedule.Flags{Every: "5m", TZ: "Europe/Berlin"}, "--tz", "cannot be used with --every"},
		{"dst with every", schedule.Flags{Every: "5m", DST: "skip"}, "--dst", "applies only to --cron"},
		{"bad every", schedule.Flags{Every: "often"}, "--every", "not a duration"},
		{"short every", schedule.Flags{Every: "500ms"}, "--every", "minimum of 1s"},
		{"past at", schedule.Flags{At: "2026-02-01T00:00:00Z"}, "--at", "in the past"},
		{"past relative at", schedule.Flags{At: "-5m"}, "--at", "in the past"},
		{"at in dst gap", schedule.Flags{At: "2026-03-08 02:30", TZ: "America/New_York"}, "--at", "does not exist"},
		{"bad at", schedule.Flags{At: "tomorrowish"}, "--at", "not a time"},
		{"at with unknown zone", schedule.Flags{At: "2026-03-08 09:00", TZ: "Nowhere/Special"}, "--tz", "unknown zone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := schedule.ParseSchedule(tc.flags, now)
			require.ErrorIs(t, err, schedule.ErrInvalidSchedule)
			var fe *schedule.FlagError
			require.True(t, errors.As(err, &fe))
			require.Equal(t, tc.flag, fe.Flag)
			require.Contains(t, fe.Rule, tc.rule)
			require.True(t, strings.HasPrefix(err.Error(), tc.flag+": ") || tc.flag == "" && err.Error() == fe.Rule, err.Error())
		})
	}
}

func TestParseScheduleValid(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ny := mustZone(t, "America/New_York")

	s, err := schedule.ParseSchedule(schedule.Flags{Cron: " 0 30 9 * * mon-fri ", TZ: "Europe/Berlin", DST: "skip"}, now)
	require.NoError(t, err)
	require.Equal(t, schedule.Schedule{Kind: schedule.KindCron, Expr: "0 30 9 * * mon-fri", TZ: "Europe/Berlin", DST: schedule.DSTSkip, Anchor: now}, s)

	s, err = schedule.ParseSchedule(schedule.Flags{Cron: "@hourly"}, now)
	require.NoError(t, err)
	require.Equal(t, now.Add(time.Hour), s.Next(now))

	s, err = schedule.ParseSchedule(schedule.Flags{Every: "90s"}, now)
	require.NoError(t, err)
	require.Equal(t, now.Add(90*time.Second), s.Next(now), "an interval is anchored at creation")

	s, err = schedule.ParseSchedule(schedule.Flags{At: "+20m"}, now)
	require.NoError(t, err)
	require.Equal(t, now.Add(20*time.Minute), s.At)

	s, err = schedule.ParseSchedule(schedule.Flags{At: "2026-03-08T09:00:00+01:00"}, now)
	require.NoError(t, err)
	require.True(t, s.At.Equal(time.Date(2026, 3, 8, 8, 0, 0, 0, time.UTC)))

	// A repeated wall time names its first occurrence.
	s, err = schedule.ParseSchedule(schedule.Flags{At: "2026-11-01 01:30", TZ: "America/New_York"}, now)
	require.NoError(t, err)
	require.Equal(t, "2026-11-01 01:30:00 EDT", s.At.In(ny).Format(wallLayout))
}

func TestValidateLiteral(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		sched schedule.Schedule
		flag  string
	}{
		{schedule.Schedule{Kind: "hourly"}, "--cron"},
		{schedule.Schedule{Kind: schedule.KindAt}, "--at"},
		{schedule.Schedule{Kind: schedule.KindEvery, Every: time.Minute, TZ: "UTC"}, "--tz"},
		{schedule.Schedule{Kind: schedule.KindAt, At: time.Now(), DST: schedule.DSTSkip}, "--dst"},
		{schedule.Schedule{Kind: schedule.KindCron, Expr: ""}, "--cron"},
	} {
		var fe *schedule.FlagError
		require.True(t, errors.As(tc.sched.Validate(), &fe), "%+v", tc.sched)
		require.Equal(t, tc.flag, fe.Flag)
	}
}
