package schedule_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/schedule"
)

func TestZonesCacheChangesNoAnswer(t *testing.T) {
	t.Parallel()
	s := schedule.Schedule{Kind: schedule.KindCron, Expr: "30 2 * * *", TZ: "Europe/Berlin"}
	cached := s
	cached.Zones = new(schedule.Zones)
	after := time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)
	for range 3 {
		require.Equal(t, s.Next(after), cached.Next(after), "a cached zone gives the same next run")
	}
	bad := cached
	bad.TZ = "Mars/Olympus"
	require.ErrorIs(t, bad.Validate(), schedule.ErrInvalidSchedule, "an unknown zone is refused with or without a cache")
	bad.TZ = "Local"
	require.ErrorContains(t, bad.Validate(), `"Local" is not allowed`)
}
