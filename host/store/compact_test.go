package store_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/storetest"
)

func TestCompactGivesFreePagesBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flowgate.db")
	s, err := store.Open(path, store.Options{InitialMmapSize: 1 << 20})
	require.NoError(t, err)
	storetest.FillAndFree(t, s, "k/", 20_000)
	sp, err := s.Space()
	require.NoError(t, err)
	require.Greater(t, sp.FreeShare(), 0.5, "%+v", sp)
	require.NoError(t, s.Close())

	before, after, err := store.Compact(path, store.Options{InitialMmapSize: 1 << 20})
	require.NoError(t, err)
	require.Less(t, after, before/2, "compacted %d → %d", before, after)
	_, err = os.Stat(path + ".compact")
	require.ErrorIs(t, err, os.ErrNotExist, "no leftover")

	s, err = store.Open(path, store.Options{InitialMmapSize: 1 << 20})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Check())
	var n int
	require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("k/", store.ScanOptions{}, func(it store.Item) bool {
			n++
			return true
		})
	}))
	require.Equal(t, 2000, n, "every key kept")
}

func TestCompactRefusesAHeldStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flowgate.db")
	s, err := store.Open(path, store.Options{Owner: "the holder"})
	require.NoError(t, err)
	defer s.Close()
	_, _, err = store.Compact(path, store.Options{LockTimeout: 50 * time.Millisecond})
	require.ErrorIs(t, err, store.ErrLocked)
	require.ErrorContains(t, err, "the holder")
}

// A process that opened the store file and waits for its lock while a
// new file is renamed over the path (as Compact does) opens the new file,
// not the old one it first opened.
func TestOpenAfterReplaceGetsTheNewFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "flowgate.db")
	a, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	require.NoError(t, a.Update(t.Context(), func(tx store.Tx) error { _, err := tx.Put("which", []byte("old")); return err }))
	require.NoError(t, a.Close())
	next := filepath.Join(dir, "next.db")
	n, err := store.Open(next, store.Options{})
	require.NoError(t, err)
	require.NoError(t, n.Update(t.Context(), func(tx store.Tx) error { _, err := tx.Put("which", []byte("new")); return err }))
	require.NoError(t, n.Close())

	type result struct {
		s   *store.Bolt
		err error
	}
	paused, resume := make(chan struct{}), make(chan struct{})
	got := make(chan result, 1)
	go func() {
		s, err := store.OpenPaused(path, store.Options{LockTimeout: 20 * time.Second}, func() {
			close(paused)
			<-resume
		})
		got <- result{s, err}
	}()
	<-paused // B has checked the file and not yet opened it
	a, err = store.Open(path, store.Options{})
	require.NoError(t, err)
	held := openFDs(t, path)
	close(resume)
	// B opens the old file and waits for A's lock.
	require.Eventually(t, func() bool { return openFDs(t, path) > held }, 10*time.Second, time.Millisecond)
	require.NoError(t, os.Rename(next, path))
	require.NoError(t, a.Close())

	r := <-got
	require.NoError(t, r.err)
	defer r.s.Close()
	require.NoError(t, r.s.View(t.Context(), func(tx store.ReadTx) error {
		it, err := tx.Get("which")
		require.NoError(t, err)
		require.Equal(t, "new", string(it.Value))
		return nil
	}))
}

// openFDs counts this process's open files that are path.
func openFDs(t *testing.T, path string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == path {
			n++
		}
	}
	return n
}
