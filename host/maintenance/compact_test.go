package maintenance_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/host/store"
)

// bloat writes about 20 MiB under junk/ and deletes nine tenths of it, so
// the store file is mostly free pages.
func bloat(t *testing.T, st store.Store) {
	t.Helper()
	val := []byte(strings.Repeat("x", 1024))
	for i := 0; i < 20_000; i += 1000 {
		require.NoError(t, st.Update(func(tx store.Tx) error {
			for j := i; j < i+1000; j++ {
				if _, err := tx.Put(fmt.Sprintf("junk/%06d", j), val); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	require.NoError(t, st.Update(func(tx store.Tx) error {
		for j := range 20_000 {
			if j%10 != 0 {
				if err := tx.Delete(fmt.Sprintf("junk/%06d", j)); err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

func TestCompactionAskedForAndDone(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "flowgate.db")
	st, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	cfg := maintenance.Config{Home: dir, Space: st.Space}

	s, err := maintenance.Run(context.Background(), eng, cfg)
	require.NoError(t, err)
	require.NotNil(t, s.Compaction)
	require.False(t, s.Compaction.Due, "a fresh store")

	bloat(t, st)
	s, err = maintenance.Run(context.Background(), eng, cfg)
	require.NoError(t, err)
	require.True(t, s.Compaction.Due, "%+v", s.Compaction)
	require.False(t, s.Compaction.Requested, "a preview asks for nothing")
	require.NoFileExists(t, filepath.Join(dir, maintenance.CompactMarker))

	cfg.Apply = true
	s, err = maintenance.Run(context.Background(), eng, cfg)
	require.NoError(t, err)
	require.True(t, s.Compaction.Requested)
	require.FileExists(t, filepath.Join(dir, maintenance.CompactMarker))

	_, _, _, err = maintenance.CompactIfRequested(dir, path, store.Options{LockTimeout: 1})
	require.ErrorIs(t, err, store.ErrLocked, "not while the store is open")
	require.NoError(t, st.Close())
	done, before, after, err := maintenance.CompactIfRequested(dir, path, store.Options{})
	require.NoError(t, err)
	require.True(t, done)
	require.Less(t, after, before/2)
	require.NoFileExists(t, filepath.Join(dir, maintenance.CompactMarker))
	done, _, _, err = maintenance.CompactIfRequested(dir, path, store.Options{})
	require.NoError(t, err)
	require.False(t, done, "nothing asked for")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, after, fi.Size())
}
