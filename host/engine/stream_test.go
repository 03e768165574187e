package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A stream is claimed when free or when its holder is gone, never from
// a live holder, and not at all with an empty outbox; the claim stays
// between events while its flow goes on, and goes with the last event of
// the ended flow, with the flow when it is pruned, and with its member
// on ReleaseStreams.
func TestStreamClaims(t *testing.T) {
	t.Parallel()
	eng, _, c := newClockEngine(t)
	live := map[string]bool{"a": true, "b": true}
	isLive := func(m string) bool { return live[m] }
	f1, f2, f3 := createFlow(t, eng), createFlow(t, eng), createFlow(t, eng)

	held, err := eng.ClaimStreams("a", []string{f1.ID, f2.ID}, isLive)
	require.NoError(t, err)
	require.Equal(t, []string{f1.ID, f2.ID}, held)
	held, err = eng.ClaimStreams("b", []string{f1.ID, f3.ID}, isLive)
	require.NoError(t, err)
	require.Equal(t, []string{f3.ID}, held, "b took a stream live a holds")
	held, err = eng.ClaimStreams("a", []string{f1.ID}, isLive)
	require.NoError(t, err)
	require.Equal(t, []string{f1.ID}, held, "a holds what it claimed")

	live["a"] = false
	held, err = eng.ClaimStreams("b", []string{f1.ID, f2.ID}, isLive)
	require.NoError(t, err)
	require.Equal(t, []string{f1.ID, f2.ID}, held, "b did not take the streams of a gone member")

	ackAll := func(id string) {
		evs, err := eng.Events(id)
		require.NoError(t, err)
		for _, ev := range evs {
			require.NoError(t, eng.AckEvent(id, ev.Seq))
		}
	}
	ackAll(f1.ID)
	holders, err := eng.StreamHolders()
	require.NoError(t, err)
	require.Equal(t, "b", holders[f1.ID], "a flow that goes on lost its gateway between events")
	_, err = eng.CancelFlow(f1.ID, "")
	require.NoError(t, err)
	ackAll(f1.ID)
	holders, err = eng.StreamHolders()
	require.NoError(t, err)
	require.Equal(t, map[string]string{f2.ID: "b", f3.ID: "b"}, holders, "the claim outlived the last event of its ended flow")
	held, err = eng.ClaimStreams("b", []string{f1.ID}, isLive)
	require.NoError(t, err)
	require.Empty(t, held, "claimed a stream with no event")

	_, err = eng.CancelFlow(f2.ID, "")
	require.NoError(t, err)
	c.t = c.t.Add(time.Hour)
	_, err = eng.PruneFlow(f2.ID, c.t)
	require.NoError(t, err)
	n, err := eng.ReleaseStreams("b")
	require.NoError(t, err)
	require.Equal(t, 1, n, "the pruned flow's claim was left")
	holders, err = eng.StreamHolders()
	require.NoError(t, err)
	require.Empty(t, holders)
	_, err = eng.ClaimStreams("", []string{f3.ID}, isLive)
	require.ErrorContains(t, err, "a member id is required")
}

// A gateway claims and releases more streams than one etcd transaction
// can write, in batches.
func TestClaimAndReleaseStreamsInBatches(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	var ids []string
	for range 130 {
		ids = append(ids, createFlow(t, eng).ID)
	}
	all := func(string) bool { return true }
	held, err := eng.ClaimStreams("a", ids, all)
	require.NoError(t, err)
	require.Equal(t, ids, held, "claims beyond one transaction were lost")
	n, err := eng.ReleaseStreams("a")
	require.NoError(t, err)
	require.Equal(t, 130, n)
	holders, err := eng.StreamHolders()
	require.NoError(t, err)
	require.Empty(t, holders)
}
