package store_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
)

// When the walk from the root loses the tree and the free list is lost
// too, the page scan reads the freed pages as well, which hold older
// copies of the records: it keeps the copy with the highest revision,
// counts the others, and leaves out what Valid refuses.
func TestSalvageScanKeepsTheNewestCopy(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	s, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	for version := byte(1); version <= 3; version++ {
		require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
			for i := range 100 {
				if _, err := tx.Put(fmt.Sprintf("flow/%04d", i), bytes.Repeat([]byte{version}, 200)); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	require.NoError(t, s.Close())

	root, err := store.KVRoot(path)
	require.NoError(t, err)
	free, err := store.FreelistPage(path)
	require.NoError(t, err)
	ps, err := store.PageSize(path)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, id := range []uint64{root, free} {
		binary.LittleEndian.PutUint16(data[int(id)*ps+8:], 0x40) // no page type has this flag
	}
	damaged := filepath.Join(t.TempDir(), "damaged.db")
	require.NoError(t, os.WriteFile(damaged, data, 0o600))

	out := filepath.Join(t.TempDir(), "salvaged.db")
	refused := errors.New("refused")
	rep, err := store.Salvage(damaged, out, store.SalvageOptions{Valid: func(it store.Item) error {
		if it.Key == "flow/0000" {
			return refused
		}
		return nil
	}})
	require.NoError(t, err)
	require.Equal(t, 99, rep.Scanned["flow"])
	require.Equal(t, rep.Scanned, rep.Copied, "the walk lost the root: everything came from the scan")
	require.Positive(t, rep.Duplicates, "the freed pages' older copies were read and dropped")
	require.Positive(t, rep.Rejected)

	got, err := store.OpenReadOnly(out, store.Options{})
	require.NoError(t, err)
	defer got.Close()
	require.NoError(t, got.View(t.Context(), func(tx store.ReadTx) error {
		_, err := tx.Get("flow/0000")
		require.ErrorIs(t, err, store.ErrKeyNotFound)
		for i := 1; i < 100; i++ {
			it, err := tx.Get(fmt.Sprintf("flow/%04d", i))
			require.NoError(t, err)
			require.Equal(t, int64(3), it.Revision)
			require.Equal(t, bytes.Repeat([]byte{3}, 200), it.Value)
		}
		return nil
	}))
}
