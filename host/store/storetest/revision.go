package storetest

import (
	"errors"
	"testing"

	"github.com/flowgate/flowgate/host/store"
	"github.com/stretchr/testify/require"
)

// testRevisionIsPerKeyVersion pins the per-key revision rules the engine
// builds a flow's revision on (a flow's Revision is the revision of its
// key; etcd's Version keeps the same rules): only a committed Put of the
// key itself moves it, by one, and every way of reading the key reports
// the same number.
func testRevisionIsPerKeyVersion(t *testing.T, s store.Store) {
	const key = "flow/1"
	for range 3 {
		put(t, s, key, "v")
	}
	same := func(want int64, why string) {
		t.Helper()
		require.Equal(t, want, mustGet(t, s, key).Revision, why)
		var scanned []store.Item
		require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
			return tx.Scan(key, store.ScanOptions{Limit: 1}, func(it store.Item) bool {
				scanned = append(scanned, it)
				return true
			})
		}))
		require.Len(t, scanned, 1)
		require.Equal(t, want, scanned[0].Revision, "Scan reports the revision Get does: %s", why)
	}
	same(3, "three Puts")

	// Neighbours: keys the key is a prefix of, keys that are a prefix of
	// it, and their deletion.
	for _, k := range []string{"flow/10", "flow/1/x", "flow/", "flow/0"} {
		put(t, s, k, "n")
	}
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error { return tx.Delete("flow/10") }))
	same(3, "writes to other keys")

	// Refusals and rollbacks.
	var putErr error
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		_, putErr = tx.Put(key, make([]byte, store.MaxValueSize+1))
		return nil
	}))
	require.ErrorIs(t, putErr, store.ErrValueTooLarge)
	same(3, "a refused Put")
	errFn := errors.New("fn refused")
	require.ErrorIs(t, s.Update(t.Context(), func(tx store.Tx) error {
		if _, err := tx.Put(key, []byte("rolled back")); err != nil {
			return err
		}
		return errFn
	}), errFn)
	same(3, "a rolled-back Update")
	require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
		_, err := tx.Get(key)
		return err
	}))
	same(3, "reads")

	// Rewriting the same bytes is still a write: callers that must not
	// bump a revision must not write.
	require.Equal(t, int64(4), put(t, s, key, "v"), "Put returns the new revision")
	same(4, "a Put of identical bytes")
}
