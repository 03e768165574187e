package api_test

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// A reader on a home that does not exist fails with ErrNoHome and
// creates nothing; on an existing home with no store yet it reads as
// empty, and still creates nothing.
func TestOpenLocalReaderNeverCreatesAHome(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "typo")
	_, err := api.OpenLocalReader(missing)
	require.ErrorIs(t, err, api.ErrNoHome)
	require.ErrorContains(t, err, "no flowgate home at "+missing+" (create one with `flowgate gateway` or any command that runs work)")
	require.NoDirExists(t, missing)

	empty := t.TempDir()
	r, err := api.OpenLocalReader(empty)
	require.NoError(t, err)
	page, err := r.ListTasks(context.Background(), apitype.TaskFilter{})
	require.NoError(t, err)
	require.Empty(t, page.Tasks)
	require.NoError(t, r.Close())
	entries, err := os.ReadDir(empty)
	require.NoError(t, err)
	require.Empty(t, entries, "a reader wrote into an empty home")
}

// Readers run side by side (bbolt's shared lock), see the records, cannot
// change them, and leave the store file and the home as they were.
func TestOpenLocalReaderOnlyReads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, home.DBFile), store.Options{})
	require.NoError(t, err)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	flow, err := eng.CreateFlow(engine.CreateFlowInput{ControllerID: "c", OwnerKey: "o", Goal: "read me"})
	require.NoError(t, err)
	require.NoError(t, st.Close())
	path := filepath.Join(dir, home.DBFile)
	before := hashFile(t, path)

	ctx := context.Background()
	first, err := api.OpenLocalReader(dir)
	require.NoError(t, err)
	second, err := api.OpenLocalReader(dir)
	require.NoError(t, err, "a second reader waited for the first")
	for _, r := range []*api.Local{first, second} {
		v, err := r.ViewFlow(ctx, flow.ID)
		require.NoError(t, err)
		require.Equal(t, "read me", v.Flow.Goal)
		_, err = r.CancelFlow(ctx, flow.ID, "")
		require.ErrorIs(t, err, store.ErrReadOnly)
		_, _, err = r.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true"}})
		require.ErrorIs(t, err, store.ErrReadOnly)
		_, err = r.Maintain(ctx, false)
		require.NoError(t, err)
	}
	require.NoError(t, first.Close())
	require.NoError(t, second.Close())
	require.Equal(t, before, hashFile(t, path), "a reader changed the store file")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "a reader left a file in the home: %v", entries)
}

func hashFile(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return sha256.Sum256(data)
}
