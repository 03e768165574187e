package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
)

// A new store is small on disk: bbolt's 16 MiB growth step, applied from
// the first commit, made an empty home's flowgate.db 16 MiB.
func TestNewStoreFileIsSmall(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	s, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("flow/1", []byte(`{"id":"1"}`))
		return err
	}))
	require.NoError(t, s.Close())
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Less(t, info.Size(), int64(256<<10), "a store holding one record takes %d bytes on disk", info.Size())
}

// A store filled past the largest growth step keeps every record, and its
// file is not much larger than what it holds.
func TestStoreGrowsInSteps(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	s, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	defer s.Close()
	fill(t, s, 2400) // about 20 MiB
	require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
		n := 0
		err := tx.Scan("fill/", store.ScanOptions{}, func(store.Item) bool { n++; return true })
		require.Equal(t, 2400, n)
		return err
	}))
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Less(t, info.Size(), int64(48<<20), "20 MiB of records take %d bytes on disk", info.Size())
}

// BenchmarkFill measures filling a new store with 32 MiB of 8 KiB records,
// 16 to a commit: the cost of growing the file from empty.
func BenchmarkFill(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		s, err := store.Open(filepath.Join(b.TempDir(), "flowgate.db"), store.Options{})
		require.NoError(b, err)
		b.StartTimer()
		fill(b, s, 4096)
		b.StopTimer()
		require.NoError(b, s.Close())
		b.StartTimer()
	}
}

// fill writes n records of 8 KiB into s, 16 to a commit.
func fill(tb testing.TB, s store.Store, n int) {
	value := []byte(strings.Repeat("x", 8<<10))
	for i := 0; i < n; i += 16 {
		require.NoError(tb, s.Update(tb.Context(), func(tx store.Tx) error {
			for j := i; j < min(i+16, n); j++ {
				if _, err := tx.Put(fmt.Sprintf("fill/%06d", j), value); err != nil {
					return err
				}
			}
			return nil
		}))
	}
}
