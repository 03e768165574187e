package maintenance_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/storetest"
)

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

	storetest.FillAndFree(t, st, "junk/", 20_000)
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
