package store

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriterWalkReadsIntoOneBuffer: a writer's open walks every page of
// the store (see verify), so the walk reads the leaf pages into one
// buffer rather than a new one a page: on a store of some 4,000 pages it
// allocates far less than the file's size.
func TestWriterWalkReadsIntoOneBuffer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flowgate.db")
	st, err := Open(path, Options{})
	require.NoError(t, err)
	value := make([]byte, 1500)
	for b := range 40 {
		require.NoError(t, st.Update(t.Context(), func(tx Tx) error {
			for i := range 200 {
				if _, err := tx.Put(fmt.Sprintf("k/%04d/%03d", b, i), value); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	require.NoError(t, st.Close())
	info, err := os.Stat(path)
	require.NoError(t, err)
	size := info.Size()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	w, err := walkFile(path, walkAll, nil)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Empty(t, w.problems)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("walked %d bytes, allocated %d", size, allocated)
	require.Less(t, allocated, uint64(size)/4, "the walk allocates a buffer a page")
}
