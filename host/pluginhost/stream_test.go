package pluginhost_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// streamFlows creates n managed flows, each with its flow.started event
// queued.
func streamFlows(t *testing.T, eng *engine.Engine, n int) []string {
	t.Helper()
	var ids []string
	for range n {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
		require.NoError(t, err)
		ids = append(ids, f.ID)
	}
	return ids
}

// countHeld counts the stream claims member holds.
func countHeld(t *testing.T, eng *engine.Engine, member string) int {
	t.Helper()
	h, err := eng.StreamHolders()
	require.NoError(t, err)
	n := 0
	for _, m := range h {
		if m == member {
			n++
		}
	}
	return n
}

// A deliverer of a member claims no more streams than it has deliveries
// free, and releases the streams it holds when it stops.
func TestDelivererClaimsWhatItHasRoomForAndReleasesOnStop(t *testing.T) {
	t.Parallel()
	rec := &recorder{fn: func(ctx context.Context, _ sdk.Event) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	live := func(m string) bool { return m == "a" }
	eng, _, start := newDelivererAt(t, t.TempDir(), func(string) (pluginhost.Handler, error) { return rec, nil },
		pluginhost.DeliveryConfig{Member: "a", Live: live, Concurrency: 2})
	flows := streamFlows(t, eng, 5)
	d := start()
	polltest.Until(t, "two deliveries in flight", func() bool { return len(rec.events()) == 2 })
	require.Equal(t, 2, countHeld(t, eng, "a"), "claimed streams it had no room for")

	require.NoError(t, d.Stop(context.Background()))
	require.Zero(t, countHeld(t, eng, "a"), "a stopped deliverer kept its streams")
	for _, id := range flows {
		evs, err := eng.Events(id)
		require.NoError(t, err)
		require.Len(t, evs, 1, "the cancelled deliveries stay in the outbox")
	}
}

// A deliverer leaves a stream a live member holds to it, takes the
// stream of a member that is gone, and keeps the streams it delivered
// while their flows go on.
func TestDelivererLeavesLiveHoldersStreams(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	live := func(m string) bool { return m == "a" || m == "b" }
	eng, _, start := newDelivererAt(t, t.TempDir(), func(string) (pluginhost.Handler, error) { return rec, nil },
		pluginhost.DeliveryConfig{Member: "a", Live: live})
	flows := streamFlows(t, eng, 4)
	held, err := eng.ClaimStreams("b", flows[:1], live)
	require.NoError(t, err)
	require.Equal(t, flows[:1], held)
	held, err = eng.ClaimStreams("gone", flows[1:2], func(string) bool { return true })
	require.NoError(t, err)
	require.Equal(t, flows[1:2], held)
	start()
	polltest.Until(t, "the free streams and the gone member's delivered", func() bool { return len(rec.events()) == 3 })
	for _, ev := range rec.events() {
		require.NotEqual(t, flows[0], ev.FlowID, "delivered a stream a live member holds")
	}
	h, err := eng.StreamHolders()
	require.NoError(t, err)
	require.Equal(t, map[string]string{flows[0]: "b", flows[1]: "a", flows[2]: "a", flows[3]: "a"}, h,
		"the streams a delivered are not its own between events")
}
