package schedule_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/schedule"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	const (
		start  = schedule.ActionStart
		skip   = schedule.ActionSkip
		buffer = schedule.ActionBuffer
		cancel = schedule.ActionCancelThenStart
	)
	cases := []struct {
		policy   schedule.Overlap
		active   bool
		buffered int
		want     schedule.Action
	}{
		{schedule.OverlapSkip, false, 0, start},
		{schedule.OverlapSkip, true, 0, skip},
		{"", true, 0, skip},
		{"", false, 0, start},
		{schedule.OverlapBufferOne, false, 0, start},
		{schedule.OverlapBufferOne, true, 0, buffer},
		{schedule.OverlapBufferOne, true, 1, skip},
		{schedule.OverlapBufferOne, false, 1, skip},
		{schedule.OverlapBufferAll, false, 0, start},
		{schedule.OverlapBufferAll, true, 0, buffer},
		{schedule.OverlapBufferAll, true, 7, buffer},
		{schedule.OverlapBufferAll, false, 2, buffer},
		{schedule.OverlapCancelOther, false, 0, start},
		{schedule.OverlapCancelOther, true, 0, cancel},
		{schedule.OverlapAllowAll, false, 0, start},
		{schedule.OverlapAllowAll, true, 3, start},
		{"whatever", true, 0, skip},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, schedule.Decide(tc.policy, tc.active, tc.buffered), "%s active=%v buffered=%d", tc.policy, tc.active, tc.buffered)
	}
}

func TestParseOverlap(t *testing.T) {
	t.Parallel()
	p, err := schedule.ParseOverlap("")
	require.NoError(t, err)
	require.Equal(t, schedule.OverlapSkip, p)
	for _, v := range []string{"skip", "buffer_one", "buffer_all", "cancel_other", "allow_all"} {
		p, err := schedule.ParseOverlap(v)
		require.NoError(t, err)
		require.Equal(t, schedule.Overlap(v), p)
	}
	_, err = schedule.ParseOverlap("terminate_other")
	require.ErrorIs(t, err, schedule.ErrInvalidSchedule)
	require.EqualError(t, err, `--overlap: unknown policy "terminate_other"; use skip, buffer_one, buffer_all, cancel_other or allow_all`)
}

func TestActionString(t *testing.T) {
	t.Parallel()
	require.Equal(t, "start", schedule.ActionStart.String())
	require.Equal(t, "skip", schedule.ActionSkip.String())
	require.Equal(t, "buffer", schedule.ActionBuffer.String())
	require.Equal(t, "cancel_then_start", schedule.ActionCancelThenStart.String())
	require.Equal(t, "Action(0)", schedule.Action(0).String())
}
