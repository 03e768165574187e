package store_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
)

// A store file whose mode forbids its owner to write is refused by Open,
// with what to do, even to root (the kernel would let root write it), and
// left unchanged; OpenReadOnly still reads it.
func TestOpenRefusesAReadOnlyFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	s, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("flow/1", []byte("one"))
		return err
	}))
	require.NoError(t, s.Close())
	require.NoError(t, os.Chmod(path, 0o400))
	before := readFile(t, path)

	_, err = store.Open(path, store.Options{})
	require.ErrorIs(t, err, store.ErrReadOnly)
	require.ErrorContains(t, err, "mode 0400")
	require.ErrorContains(t, err, "chmod u+w "+path)
	require.Equal(t, before, readFile(t, path))

	r, err := store.OpenReadOnly(path, store.Options{})
	require.NoError(t, err)
	require.NoError(t, r.View(t.Context(), func(tx store.ReadTx) error {
		it, err := tx.Get("flow/1")
		require.Equal(t, "one", string(it.Value))
		return err
	}))
	require.NoError(t, r.Close())
	require.Equal(t, before, readFile(t, path))
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}
