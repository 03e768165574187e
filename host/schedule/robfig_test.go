package schedule_test

import (
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/stretchr/testify/require"
)

// TestRobfigBehaviour pins what robfig/cron v3.0.1 does on its own, which is
// why Schedule.Next walks wall times itself instead of calling robfig's Next.
// If an upgrade changes any of this, revisit the notes in doc.go.
func TestRobfigBehaviour(t *testing.T) {
	t.Parallel()
	parser := cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	next := func(expr, tz, after string, n int) []string {
		loc := mustZone(t, tz)
		s, err := parser.Parse(expr)
		require.NoError(t, err)
		s.(*cron.SpecSchedule).Location = loc
		ts := wall(t, loc, after)
		var out []string
		for i := 0; i < n; i++ {
			ts = s.Next(ts)
			out = append(out, ts.In(loc).Format(wallLayout))
		}
		return out
	}

	// Gaps: robfig only skips; there is no way to ask for shift.
	require.Equal(t, []string{"2026-03-09 02:30:00 EDT"}, next("30 2 * * *", "America/New_York", "2026-03-08 00:00:00", 1))
	require.Equal(t, []string{"2026-03-30 02:30:00 CEST"}, next("30 2 * * *", "Europe/Berlin", "2026-03-29 00:00:00", 1))

	// Repeats: robfig fires a repeated wall time twice, once per occurrence.
	require.Equal(t, []string{"2026-11-01 01:30:00 EDT", "2026-11-01 01:30:00 EST"},
		next("30 1 * * *", "America/New_York", "2026-11-01 00:00:00", 2))
	require.Equal(t, []string{"2026-10-25 02:30:00 CEST", "2026-10-25 02:30:00 CET"},
		next("30 2 * * *", "Europe/Berlin", "2026-10-25 00:00:00", 2))

	// @every is relative to the call and clamps bad intervals instead of
	// rejecting them.
	s, err := parser.Parse("@every -1s")
	require.NoError(t, err)
	require.Equal(t, time.Second, s.(cron.ConstantDelaySchedule).Delay)

	// An impossible date parses, and Next returns the zero time.
	s, err = parser.Parse("0 0 30 2 *")
	require.NoError(t, err)
	require.True(t, s.Next(time.Now()).IsZero())

	// Errors name the value and bound but not the field.
	_, err = parser.Parse("0 0 * 13 *")
	require.EqualError(t, err, "end of range (13) above maximum (12): 13")
}
