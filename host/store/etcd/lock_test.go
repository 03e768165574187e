package etcd_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store/etcd"
)

// TestHoldExcludesAndLetsGo: a held name refuses a second claimant with
// the holder's record, is free again at once after Release, and after a
// holder dies (its client gone, nothing revoked) once its lease ends.
func TestHoldExcludesAndLetsGo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	prefix := server.Prefix()
	a, aCli := openOwn(t, prefix)
	b, _ := openOwn(t, prefix)

	held, err := a.Hold(ctx, "gateway", "process A", 1)
	require.NoError(t, err)
	_, err = b.Hold(ctx, "gateway", "process B", 1)
	require.ErrorIs(t, err, etcd.ErrHeld)
	require.ErrorContains(t, err, "is held by process A")
	require.NoError(t, held.Release())
	require.NoError(t, held.Release(), "Release is idempotent")
	<-held.Done()

	held, err = b.Hold(ctx, "gateway", "process B", 1)
	require.NoError(t, err, "a released name is free at once")
	require.NoError(t, held.Release())

	_, err = a.Hold(ctx, "gateway", "process A", 1)
	require.NoError(t, err)
	require.NoError(t, aCli.Close()) // A dies: its keepalives stop
	waitUntil(t, "the dead holder's lease to end", func() bool {
		held, err = b.Hold(ctx, "gateway", "process B", 1)
		if err != nil {
			require.ErrorIs(t, err, etcd.ErrHeld)
		}
		return err == nil
	})
	require.NoError(t, held.Release())
}
