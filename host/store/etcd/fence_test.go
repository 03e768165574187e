package etcd_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
)

// TestUpdateFenced: a fenced write commits while its fence key is the
// one created at the fence's revision; once the key is gone (or made
// again) it fails with ErrFenced and writes nothing.
func TestUpdateFenced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, cli := openOwn(t, server.Prefix())
	fenceKey := strings.TrimSuffix(s.Prefix(), "/") + ".fence"
	put, err := cli.Put(ctx, fenceKey, "leader")
	require.NoError(t, err)
	f := store.Fence{Key: fenceKey, Revision: put.Header.Revision}
	write := func(value string) error {
		return s.UpdateFenced(t.Context(), f, func(tx store.Tx) error {
			_, err := tx.Put("k", []byte(value))
			return err
		})
	}
	require.NoError(t, write("one"))

	_, err = cli.Delete(ctx, fenceKey)
	require.NoError(t, err)
	require.ErrorIs(t, write("two"), store.ErrFenced)
	_, err = cli.Put(ctx, fenceKey, "another leader")
	require.NoError(t, err)
	require.ErrorIs(t, write("three"), store.ErrFenced, "a key made again is another fence")

	require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
		it, err := tx.Get("k")
		require.Equal(t, "one", string(it.Value))
		return err
	}))
}
