// Package storetest is the conformance suite for store.Store backends. A
// backend's tests call Run with a function that opens a fresh, empty store;
// every backend must pass it unchanged.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
//			require.NoError(t, err)
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// The suite covers revisions (the per-key rules of etcd's Version, which
// the engine takes as a flow's revision), reads and scans, rollback,
// limits, and the concurrency contract the engine builds on:
// compare-and-swap under contention, a linearizability check of
// concurrent guarded writes and reads (porcupine), and group commit
// isolation between writers.
package storetest

import (
	"errors"
	"testing"

	"github.com/flowgate/flowgate/host/store"
	"github.com/stretchr/testify/require"
)

// Run runs the conformance suite as parallel subtests of t. open must
// return a new, empty store for each call and arrange its Close with
// t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, s store.Store)
	}{
		{"GetMissing", testGetMissing},
		{"Revisions", testRevisions},
		{"ReadYourWrites", testReadYourWrites},
		{"DeleteRestartsRevision", testDeleteRestartsRevision},
		{"RevisionIsPerKeyVersion", testRevisionIsPerKeyVersion},
		{"EmptyValue", testEmptyValue},
		{"ValuesAreCopies", testValuesAreCopies},
		{"FailedUpdateRollsBack", testFailedUpdateRollsBack},
		{"UpdateVisibleInLaterView", testUpdateVisibleInLaterView},
		{"ValueTooLarge", testValueTooLarge},
		{"EmptyKey", testEmptyKey},
		{"ScanOrder", testScanOrder},
		{"ScanAfter", testScanAfter},
		{"ScanReverse", testScanReverse},
		{"ScanLimitAndPaging", testScanLimitAndPaging},
		{"ScanEarlyStop", testScanEarlyStop},
		{"CompareAndSwap", testCompareAndSwap},
		{"Create", testCreate},
		{"Linearizable", testLinearizable},
		{"GroupCommitDisjointWriters", testGroupCommitDisjointWriters},
		{"FailingWriterIsolated", testFailingWriterIsolated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, open(t))
		})
	}
}

// put writes key in its own Update and returns the new revision.
func put(t *testing.T, s store.Store, key, value string) int64 {
	t.Helper()
	var rev int64
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		var err error
		rev, err = tx.Put(key, []byte(value))
		return err
	}))
	return rev
}

// get reads key in its own View.
func get(t *testing.T, s store.Store, key string) (store.Item, error) {
	t.Helper()
	var item store.Item
	err := s.View(t.Context(), func(tx store.ReadTx) error {
		var err error
		item, err = tx.Get(key)
		return err
	})
	return item, err
}

// mustGet reads key and fails the test if it is missing.
func mustGet(t *testing.T, s store.Store, key string) store.Item {
	t.Helper()
	item, err := get(t, s, key)
	require.NoError(t, err, "get %q", key)
	return item
}

func testGetMissing(t *testing.T, s store.Store) {
	_, err := get(t, s, "flow/missing")
	require.ErrorIs(t, err, store.ErrKeyNotFound)

	put(t, s, "flow/a", "x")
	_, err = get(t, s, "flow/") // a prefix of a key is not the key
	require.ErrorIs(t, err, store.ErrKeyNotFound)
}

func testRevisions(t *testing.T, s store.Store) {
	for want := int64(1); want <= 5; want++ {
		require.Equal(t, want, put(t, s, "flow/1", "v"))
		item := mustGet(t, s, "flow/1")
		require.Equal(t, want, item.Revision)
		require.Equal(t, "flow/1", item.Key)
		require.Equal(t, "v", string(item.Value))
	}
	require.Equal(t, int64(1), put(t, s, "flow/2", "other"), "revisions are per key")
	require.Equal(t, int64(5), mustGet(t, s, "flow/1").Revision)
}

func testReadYourWrites(t *testing.T, s store.Store) {
	put(t, s, "k", "old")
	var seen store.Item
	var seenErr error
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		if _, err := tx.Put("k", []byte("new")); err != nil {
			return err
		}
		seen, seenErr = tx.Get("k")
		return nil
	}))
	require.NoError(t, seenErr)
	require.Equal(t, "new", string(seen.Value))
	require.Equal(t, int64(2), seen.Revision)
}

func testDeleteRestartsRevision(t *testing.T, s store.Store) {
	put(t, s, "k", "a")
	put(t, s, "k", "b")
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error { return tx.Delete("k") }))
	_, err := get(t, s, "k")
	require.ErrorIs(t, err, store.ErrKeyNotFound)
	require.Equal(t, int64(1), put(t, s, "k", "c"))

	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error { return tx.Delete("never-existed") }),
		"deleting a missing key is not an error")
}

func testEmptyValue(t *testing.T, s store.Store) {
	require.Equal(t, int64(1), put(t, s, "k", ""))
	item := mustGet(t, s, "k")
	require.Empty(t, item.Value)
	require.Equal(t, int64(1), item.Revision)
}

func testValuesAreCopies(t *testing.T, s store.Store) {
	buf := []byte("original")
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("k", buf)
		return err
	}))
	copy(buf, "XXXXXXXX") // the caller's buffer is the caller's
	item := mustGet(t, s, "k")
	require.Equal(t, "original", string(item.Value))

	item.Value[0] = 'Y' // so is the returned value
	require.Equal(t, "original", string(mustGet(t, s, "k").Value))

	// Items kept from a finished read stay intact while the store changes
	// underneath them.
	for i := range 20 {
		put(t, s, keyN("scan/", i), valueN(i))
	}
	var kept []store.Item
	require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("scan/", store.ScanOptions{}, func(it store.Item) bool {
			kept = append(kept, it)
			return true
		})
	}))
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		for i := range 20 {
			if err := tx.Delete(keyN("scan/", i)); err != nil {
				return err
			}
			if _, err := tx.Put(keyN("other/", i), make([]byte, 2048)); err != nil {
				return err
			}
		}
		return nil
	}))
	require.Len(t, kept, 20)
	for i, it := range kept {
		require.Equal(t, keyN("scan/", i), it.Key)
		require.Equal(t, valueN(i), string(it.Value))
	}
}

func testFailedUpdateRollsBack(t *testing.T, s store.Store) {
	put(t, s, "keep", "before")
	put(t, s, "gone", "before")
	errFn := errors.New("fn refused")
	err := s.Update(t.Context(), func(tx store.Tx) error {
		if _, err := tx.Put("keep", []byte("after")); err != nil {
			return err
		}
		if _, err := tx.Put("new", []byte("x")); err != nil {
			return err
		}
		if err := tx.Delete("gone"); err != nil {
			return err
		}
		return errFn
	})
	require.ErrorIs(t, err, errFn, "Update returns fn's error")

	item := mustGet(t, s, "keep")
	require.Equal(t, "before", string(item.Value))
	require.Equal(t, int64(1), item.Revision)
	require.Equal(t, "before", string(mustGet(t, s, "gone").Value))
	_, err = get(t, s, "new")
	require.ErrorIs(t, err, store.ErrKeyNotFound)
}

func testUpdateVisibleInLaterView(t *testing.T, s store.Store) {
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		for i := range 10 {
			if _, err := tx.Put(keyN("flow/", i), []byte(valueN(i))); err != nil {
				return err
			}
		}
		return tx.Delete(keyN("flow/", 3))
	}))
	for i := range 10 {
		item, err := get(t, s, keyN("flow/", i))
		if i == 3 {
			require.ErrorIs(t, err, store.ErrKeyNotFound)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, valueN(i), string(item.Value))
	}
}

func testValueTooLarge(t *testing.T, s store.Store) {
	var putErr error
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		_, putErr = tx.Put("big", make([]byte, store.MaxValueSize+1))
		return nil
	}))
	require.ErrorIs(t, putErr, store.ErrValueTooLarge)
	_, err := get(t, s, "big")
	require.ErrorIs(t, err, store.ErrKeyNotFound)

	require.Equal(t, int64(1), put(t, s, "max", string(make([]byte, store.MaxValueSize))),
		"a value of exactly MaxValueSize fits")
	require.Len(t, mustGet(t, s, "max").Value, store.MaxValueSize)
}

func testEmptyKey(t *testing.T, s store.Store) {
	var putErr, delErr, getErr error
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		_, putErr = tx.Put("", []byte("x"))
		delErr = tx.Delete("")
		_, getErr = tx.Get("")
		return nil
	}))
	require.ErrorIs(t, putErr, store.ErrEmptyKey)
	require.ErrorIs(t, delErr, store.ErrEmptyKey)
	require.ErrorIs(t, getErr, store.ErrEmptyKey)
	_, err := get(t, s, "")
	require.ErrorIs(t, err, store.ErrEmptyKey)
}
