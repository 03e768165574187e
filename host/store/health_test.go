package store_test

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/fulldisk"
)

// On a full disk a commit fails with ErrWriteFailed wrapping ENOSPC, the
// store says it is not writable because the disk is full, and the first
// commit after space returns succeeds and clears that, with no reopen.
func TestWriteHealthOnAFullDisk(t *testing.T) {
	dir := fulldisk.Mount(t, 2<<20)
	s, err := store.Open(filepath.Join(dir, "flowgate.db"), store.Options{})
	require.NoError(t, err)
	defer s.Close()
	require.True(t, s.WriteHealth().Writable)
	value := make([]byte, 64<<10)
	put := func(i int) error {
		return s.Update(t.Context(), func(tx store.Tx) error {
			_, err := tx.Put(fmt.Sprintf("k/%04d", i), value)
			return err
		})
	}
	require.NoError(t, put(0))
	okAt := s.WriteHealth().LastWriteAt
	require.False(t, okAt.IsZero())

	filler := fulldisk.Fill(t, dir)
	var werr error
	for i := 1; i < 64 && werr == nil; i++ {
		werr = put(i)
	}
	require.ErrorIs(t, werr, store.ErrWriteFailed)
	require.ErrorIs(t, werr, syscall.ENOSPC)
	require.True(t, store.DiskFull(werr))
	require.ErrorContains(t, werr, "disk full")
	h := s.WriteHealth()
	require.False(t, h.Writable)
	require.True(t, h.DiskFull)
	require.Positive(t, h.Failures)
	require.Contains(t, h.Problem("store"), "store not writable: disk full")
	require.NotEmpty(t, h.LastError)

	filler.Free(t)
	require.NoError(t, put(100))
	h = s.WriteHealth()
	require.True(t, h.Writable, "writes resume by themselves")
	require.False(t, h.DiskFull)
	require.Zero(t, h.Failures)
	require.Empty(t, h.Problem("store"))
	require.NotEmpty(t, h.LastError, "the last error is kept after writes resume")
	require.True(t, h.LastWriteAt.After(okAt))
}
