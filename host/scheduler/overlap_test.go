package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/scheduler"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	const (
		start  = scheduler.ActionStart
		skip   = scheduler.ActionSkip
		buffer = scheduler.ActionBuffer
		cancel = scheduler.ActionCancelThenStart
	)
	cases := []struct {
		policy   scheduler.Overlap
		active   bool
		buffered int
		want     scheduler.Action
	}{
		{scheduler.OverlapSkip, false, 0, start},
		{scheduler.OverlapSkip, true, 0, skip},
		{"", true, 0, skip},
		{"", false, 0, start},
		{scheduler.OverlapBufferOne, false, 0, start},
		{scheduler.OverlapBufferOne, true, 0, buffer},
		{scheduler.OverlapBufferOne, true, 1, skip},
		{scheduler.OverlapBufferOne, false, 1, skip},
		{scheduler.OverlapBufferAll, false, 0, start},
		{scheduler.OverlapBufferAll, true, 0, buffer},
		{scheduler.OverlapBufferAll, true, 7, buffer},
		{scheduler.OverlapBufferAll, false, 2, buffer},
		{scheduler.OverlapCancelOther, false, 0, start},
		{scheduler.OverlapCancelOther, true, 0, cancel},
		{scheduler.OverlapAllowAll, false, 0, start},
		{scheduler.OverlapAllowAll, true, 3, start},
		{"whatever", true, 0, skip},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, scheduler.Decide(tc.policy, tc.active, tc.buffered), "%s active=%v buffered=%d", tc.policy, tc.active, tc.buffered)
	}
}

func TestParseOverlap(t *testing.T) {
	t.Parallel()
	p, err := scheduler.ParseOverlap("")
	require.NoError(t, err)
	require.Equal(t, scheduler.OverlapSkip, p)
	for _, v := range []string{"skip", "buffer_one", "buffer_all", "cancel_other", "allow_all"} {
		p, err := scheduler.ParseOverlap(v)
		require.NoError(t, err)
		require.Equal(t, scheduler.Overlap(v), p)
	}
	_, err = scheduler.ParseOverlap("terminate_other")
	require.ErrorIs(t, err, scheduler.ErrInvalidSchedule)
	require.EqualError(t, err, `--overlap: unknown policy "terminate_other"; use skip, buffer_one, buffer_all, cancel_other or allow_all`)
}

func TestActionString(t *testing.T) {
	t.Parallel()
	require.Equal(t, "start", scheduler.ActionStart.String())
	require.Equal(t, "skip", scheduler.ActionSkip.String())
	require.Equal(t, "buffer", scheduler.ActionBuffer.String())
	require.Equal(t, "cancel_then_start", scheduler.ActionCancelThenStart.String())
	require.Equal(t, "Action(0)", scheduler.Action(0).String())
}
