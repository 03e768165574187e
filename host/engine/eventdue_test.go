package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
)

// readCounter is a store that counts the items its read transactions
// return (Gets and Scan items).
type readCounter struct {
	store.Store
	reads atomic.Int64
}

func (s *readCounter) View(ctx context.Context, fn func(store.ReadTx) error) error {
	return s.Store.View(ctx, func(tx store.ReadTx) error { return fn(countingTx{tx, &s.reads}) })
}

type countingTx struct {
	store.ReadTx
	n *atomic.Int64
}

func (t countingTx) Get(key string) (store.Item, error) {
	t.n.Add(1)
	return t.ReadTx.Get(key)
}

func (t countingTx) Scan(prefix string, opts store.ScanOptions, fn func(store.Item) bool) error {
	return t.ReadTx.Scan(prefix, opts, func(it store.Item) bool {
		t.n.Add(1)
		return fn(it)
	})
}

// A delivery pass reads what it delivers: with 300 flows whose head
// waits for a retry an hour away (a controller that is down), and three
// more events behind each, it reads the few due heads and stops, and
// with a limit it reads no more than the limit asks. Before, each pass
// read every pending event and the flow of every due head.
func TestDeliveryPassReadsWhatItDelivers(t *testing.T) {
	t.Parallel()
	st := &readCounter{Store: openStore(t)}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	eng, err := engine.New(st, engine.Config{Now: func() time.Time { return at }})
	require.NoError(t, err)
	for range 300 {
		f := createFlow(t, eng)
		for range 3 {
			f, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{})
			require.NoError(t, err)
			f, err = eng.Resume(f.ID, f.Revision, engine.ResumeInput{})
			require.NoError(t, err)
		}
		_, err = eng.EventFailed(f.ID, 1, engine.EventFailure{Error: "controller down", RetryAfter: time.Hour})
		require.NoError(t, err)
	}
	var due []string
	for range 3 {
		due = append(due, createFlow(t, eng).ID)
	}

	st.reads.Store(0)
	ds, err := eng.NextDeliveries(0, nil)
	require.NoError(t, err)
	require.Len(t, ds, 3)
	for i, d := range ds {
		require.Equal(t, due[i], d.Event.FlowID, "due heads come in the order they came due")
	}
	require.LessOrEqual(t, st.reads.Load(), int64(3*4+1), "a pass read events that were not due")

	at = at.Add(2 * time.Hour)
	st.reads.Store(0)
	ds, err = eng.NextDeliveries(5, nil)
	require.NoError(t, err)
	require.Len(t, ds, 5)
	require.LessOrEqual(t, st.reads.Load(), int64(5*4+1), "a pass read past its limit")

	skipped := map[string]bool{}
	ds, err = eng.NextDeliveries(0, func(flowID, holder string) bool {
		skipped[flowID] = true
		return len(skipped) <= 10
	})
	require.NoError(t, err)
	require.Len(t, ds, 303-10, "every head is due once the retries come due")
	for _, d := range ds {
		require.Equal(t, int64(1), d.Event.Seq, "only a flow's head is delivered")
	}
}

// dropKeys deletes keys from st, 30 a transaction, as an older flowgate
// that kept no delivery queue would have left them.
func dropKeys(t *testing.T, st store.Store, keys []string) {
	t.Helper()
	for len(keys) > 0 {
		batch := keys[:min(len(keys), 30)]
		keys = keys[len(batch):]
		require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
			for _, k := range batch {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
			return nil
		}))
	}
}

// An outbox written before the delivery queue existed is queued by
// IndexOutbox, and a queue entry that names no head is dropped.
func TestIndexOutboxQueuesOldHeads(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	a, b := createFlow(t, eng), createFlow(t, eng)
	// An older flowgate wrote the outboxes without queue entries, and
	// left an entry behind for an event that is gone.
	entries := keysUnder(t, st, "evdue/")
	require.Len(t, entries, 2)
	dropKeys(t, st, entries)
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("evdue/00000000000000000001/"+a.ID+"/00000000000000000009", nil)
		return err
	}))
	ds, err := eng.NextDeliveries(0, nil)
	require.NoError(t, err)
	require.Empty(t, ds, "the test's setup left a head queued")

	n, err := eng.IndexOutbox()
	require.NoError(t, err)
	require.Equal(t, 3, n)
	ds, err = eng.NextDeliveries(0, nil)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	require.ElementsMatch(t, []string{a.ID, b.ID}, []string{ds[0].Event.FlowID, ds[1].Event.FlowID})
	n, err = eng.IndexOutbox()
	require.NoError(t, err)
	require.Zero(t, n, "a second pass found work")
}

// IndexOutbox queues more heads than one etcd transaction can write, in
// batches.
func TestIndexOutboxInBatches(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	for range 90 {
		createFlow(t, eng)
	}
	entries := keysUnder(t, st, "evdue/")
	require.Len(t, entries, 90)
	dropKeys(t, st, entries)
	n, err := eng.IndexOutbox()
	require.NoError(t, err)
	require.Equal(t, 90, n)
	ds, err := eng.NextDeliveries(0, nil)
	require.NoError(t, err)
	require.Len(t, ds, 90)
}
