package schedule_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/schedule"
)

func TestFailureBackoff(t *testing.T) {
	t.Parallel()
	want := []time.Duration{0, 30 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, time.Hour, time.Hour}
	for n, w := range want {
		require.Equal(t, w, schedule.FailureBackoff(n), "after %d failures", n)
	}
	require.Equal(t, time.Duration(0), schedule.FailureBackoff(-1))
	require.Equal(t, time.Hour, schedule.FailureBackoff(1000))
}

func TestShouldDisable(t *testing.T) {
	t.Parallel()
	for n := 0; n < 10; n++ {
		ok, reason := schedule.ShouldDisable(n)
		require.False(t, ok)
		require.Empty(t, reason)
	}
	ok, reason := schedule.ShouldDisable(10)
	require.True(t, ok)
	require.Equal(t, "disabled after 10 consecutive failures; fix the cause, then enable the job again", reason)
	ok, _ = schedule.ShouldDisable(11)
	require.True(t, ok)
}

func TestAlertDue(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	hour := time.Hour
	cases := []struct {
		name        string
		consecutive int
		after       int
		lastAlert   time.Time
		cooldown    time.Duration
		want        bool
	}{
		{"below threshold", 1, 2, time.Time{}, hour, false},
		{"at threshold, never alerted", 2, 2, time.Time{}, hour, true},
		{"within cooldown", 5, 2, now.Add(-30 * time.Minute), hour, false},
		{"cooldown just over", 5, 2, now.Add(-hour), hour, true},
		{"zero cooldown", 3, 2, now.Add(-time.Second), 0, true},
		{"after zero counts as one", 1, 0, time.Time{}, hour, true},
		{"no failures", 0, 0, time.Time{}, hour, false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, schedule.AlertDue(tc.consecutive, tc.after, tc.lastAlert, now, tc.cooldown), tc.name)
	}

	// A streak of hourly failures with the defaults alerts at the 2nd and
	// then at most once an hour.
	var alerts []int
	var last time.Time
	for i := 1; i <= 6; i++ {
		at := now.Add(time.Duration(i) * 40 * time.Minute)
		if schedule.AlertDue(i, schedule.DefaultAlertAfter, last, at, schedule.DefaultAlertCooldown) {
			alerts, last = append(alerts, i), at
		}
	}
	require.Equal(t, []int{2, 4, 6}, alerts)
}
