package store_test

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/storetest"
)

// overlayOn returns an Overlay over the store file at path, opened
// read-only, closed when the test ends.
func overlayOn(t *testing.T, path string) *store.Overlay {
	t.Helper()
	base, err := store.OpenReadOnly(path, store.Options{})
	require.NoError(t, err)
	o := store.NewOverlay(base)
	t.Cleanup(func() { require.NoError(t, o.Close()) })
	return o
}

// An Overlay over an empty store behaves as a store.
func TestOverlayConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		path := filepath.Join(t.TempDir(), "flowgate.db")
		s, err := store.Open(path, store.Options{})
		require.NoError(t, err)
		require.NoError(t, s.Close())
		return overlayOn(t, path)
	})
}

// Random writes over a store with records read the same through an
// Overlay as through the store itself, in every kind of scan, and leave
// the file beneath the Overlay as it was.
func TestOverlayReadsAsTheStoreWould(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	basePath, realPath := filepath.Join(dir, "base.db"), filepath.Join(dir, "real.db")
	rng := rand.New(rand.NewPCG(1, 2))
	key := func() string { return fmt.Sprintf("k/%02d", rng.IntN(40)) }

	base, err := store.Open(basePath, store.Options{})
	require.NoError(t, err)
	require.NoError(t, base.Update(t.Context(), func(tx store.Tx) error {
		for range 30 {
			if _, err := tx.Put(key(), []byte("base")); err != nil {
				return err
			}
		}
		_, err := tx.Put("other", []byte("outside the prefix"))
		return err
	}))
	require.NoError(t, base.Close())
	data, err := os.ReadFile(basePath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(realPath, data, 0o600))
	before := sha256.Sum256(data)

	real, err := store.Open(realPath, store.Options{})
	require.NoError(t, err)
	defer real.Close()
	o := overlayOn(t, basePath)

	for round := range 300 {
		ops := make([]func(store.Tx) error, 1+rng.IntN(4))
		for i := range ops {
			k, v := key(), fmt.Sprintf("round %d", round)
			if rng.IntN(3) == 0 {
				ops[i] = func(tx store.Tx) error { return tx.Delete(k) }
			} else {
				ops[i] = func(tx store.Tx) error { _, err := tx.Put(k, []byte(v)); return err }
			}
		}
		apply := func(tx store.Tx) error {
			for _, op := range ops {
				if err := op(tx); err != nil {
					return err
				}
			}
			return nil
		}
		require.NoError(t, real.Update(t.Context(), apply))
		require.NoError(t, o.Update(t.Context(), apply))

		opts := store.ScanOptions{Reverse: rng.IntN(2) == 0, Limit: rng.IntN(8)}
		if rng.IntN(2) == 0 {
			opts.After = key()
		}
		require.Equal(t, scanAll(t, real, opts), scanAll(t, o, opts), "round %d, %+v", round, opts)
	}

	o.Seal()
	require.ErrorIs(t, o.Update(t.Context(), func(store.Tx) error { return nil }), store.ErrReadOnly)
	data, err = os.ReadFile(basePath)
	require.NoError(t, err)
	require.Equal(t, before, sha256.Sum256(data), "the file beneath an Overlay changed")
}

// scanAll returns every item a scan of the prefix k/ with opts visits.
func scanAll(t *testing.T, s store.Store, opts store.ScanOptions) []store.Item {
	var items []store.Item
	require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("k/", opts, func(it store.Item) bool {
			items = append(items, it)
			return true
		})
	}))
	return items
}
