package engine_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// A wake fires once per key at its time, as a flow.woken event with its
// key and time; asking again for a key, before or after it fired, changes
// nothing.
func TestWakeFiresOncePerKey(t *testing.T) {
	t.Parallel()
	eng, _, c := newClockEngine(t)
	f := createFlow(t, eng)
	at := c.t.Add(time.Minute)
	created, err := eng.SetWake(f.ID, "remind", at)
	require.NoError(t, err)
	require.True(t, created)
	created, err = eng.SetWake(f.ID, "remind", at.Add(-30*time.Second))
	require.NoError(t, err)
	require.False(t, created, "the first time of a key stands")
	_, err = eng.SetWake(f.ID, "later", at.Add(time.Hour))
	require.NoError(t, err)

	n, err := eng.FireWakes(0)
	require.NoError(t, err)
	require.Zero(t, n, "nothing is due yet")

	c.t = at
	n, err = eng.FireWakes(0)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []sdk.EventType{sdk.EventFlowStarted, sdk.EventFlowWoken}, eventTypes(t, eng, f.ID))
	evs, err := eng.Events(f.ID)
	require.NoError(t, err)
	var woken sdk.Woken
	require.NoError(t, json.Unmarshal(evs[1].Data, &woken))
	require.Equal(t, sdk.Woken{Key: "remind", At: at}, woken)

	_, err = eng.SetWake(f.ID, "remind", at)
	require.NoError(t, err)
	c.t = at.Add(30 * time.Minute)
	n, err = eng.FireWakes(0)
	require.NoError(t, err)
	require.Zero(t, n, "a key fires once")
	require.Len(t, eventTypes(t, eng, f.ID), 2)

	g, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, f.Revision, g.Revision, "wakes do not write the flow")
	page, err := eng.History(f.ID, 0, 0)
	require.NoError(t, err)
	var kinds []engine.HistoryKind
	for _, e := range page.Entries {
		kinds = append(kinds, e.Kind)
	}
	require.Subset(t, kinds, []engine.HistoryKind{engine.HistoryTimerSet, engine.HistoryTimerFired})
}

// A pending wake is in the store: it fires after the store is closed and
// opened again (a gateway restart), once.
func TestWakeSurvivesReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	open := func() (*engine.Engine, store.Store) {
		st, err := store.Open(path, store.Options{})
		require.NoError(t, err)
		eng, err := engine.New(st, engine.Config{Now: func() time.Time { return now }})
		require.NoError(t, err)
		return eng, st
	}
	eng, st := open()
	f := createFlow(t, eng)
	_, err := eng.SetWake(f.ID, "k", now.Add(time.Second))
	require.NoError(t, err)
	require.NoError(t, st.Close())

	now = now.Add(time.Minute)
	eng, st = open()
	defer st.Close()
	n, err := eng.FireWakes(0)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = eng.FireWakes(0)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, []sdk.EventType{sdk.EventFlowStarted, sdk.EventFlowWoken}, eventTypes(t, eng, f.ID))
}

// A wake that comes due after its flow ended fires without an event, and
// pruning the flow deletes its wakes.
func TestWakeOfEndedFlow(t *testing.T) {
	t.Parallel()
	eng, st, c := newClockEngine(t)
	f := createFlow(t, eng)
	_, err := eng.SetWake(f.ID, "k", c.t.Add(time.Minute))
	require.NoError(t, err)
	_, err = eng.SetWake(f.ID, "far", c.t.Add(24*time.Hour))
	require.NoError(t, err)
	f, err = eng.Fail(f.ID, f.Revision, engine.EndInput{})
	require.NoError(t, err)
	_, err = eng.SetWake(f.ID, "late", c.t)
	require.ErrorIs(t, err, sdk.ErrTerminal)

	c.t = c.t.Add(time.Hour)
	n, err := eng.FireWakes(0)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, []sdk.EventType{sdk.EventFlowStarted}, eventTypes(t, eng, f.ID))

	c.t = c.t.Add(8 * 24 * time.Hour)
	_, err = eng.PruneFlow(f.ID, c.t)
	require.NoError(t, err)
	require.Empty(t, keysUnder(t, st, "wake/"))
	require.Empty(t, keysUnder(t, st, "wakedue/"), "the far wake's queue entry went with its flow")
}

// SetWake names what is wrong with a bad request.
func TestSetWakeRefusals(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	now := time.Now()
	_, err := eng.SetWake(f.ID, "", now)
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "a wake needs a key")
	_, err = eng.SetWake(f.ID, "k", time.Time{})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	_, err = eng.SetWake("nope", "k", now)
	require.ErrorIs(t, err, sdk.ErrNotFound)
}

// More wakes come due at once than one etcd transaction can fire (128
// operations): they fire in batches, every one of them. Before, the
// whole lot was one transaction, refused on etcd at every pass, so none
// ever fired.
func TestManyDueWakesFireInBatches(t *testing.T) {
	t.Parallel()
	eng, _, c := newClockEngine(t)
	var flows []string
	for range 40 {
		f := createFlow(t, eng)
		flows = append(flows, f.ID)
		for _, key := range []string{"a", "b"} {
			_, err := eng.SetWake(f.ID, key, c.t.Add(time.Minute))
			require.NoError(t, err)
		}
	}
	c.t = c.t.Add(time.Hour)
	n, err := eng.FireWakes(50)
	require.NoError(t, err)
	require.Equal(t, 50, n, "the limit holds across batches")
	n, err = eng.FireWakes(0)
	require.NoError(t, err)
	require.Equal(t, 30, n)
	for _, id := range flows {
		require.Len(t, eventTypes(t, eng, id), 3, "flow %s: its start and two wakes", id)
	}
}
