package etcd_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
)

// TestCreateOfAnUnreadKeyIsOneTxn: store.Create of a key the store never
// read sends no Range: the key's absence is a compare of the one Txn.
func TestCreateOfAnUnreadKeyIsOneTxn(t *testing.T) {
	t.Parallel()
	s, requests := counted(t, server.Prefix())
	require.NoError(t, s.Update(t.Context(), guard("flow", 0, "1")))
	requests.Store(0)
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		if err := guard("flow", 1, "2")(tx); err != nil {
			return err
		}
		return store.Create(tx, "log/001", []byte("x"))
	}))
	require.Equal(t, int64(1), requests.Load(), "one Txn, no Range")
	requireAt(t, s, "log/001", "x", 1)
	requireAt(t, s, "flow", "2", 2)
}

// TestCreateOfAKeyAnotherStoreWroteIsRefused: when the key a Create took
// to be absent exists (another store wrote it, unseen), the Txn fails and
// writes nothing, the Update runs again knowing the key, and Create
// refuses it with ErrKeyExists.
func TestCreateOfAKeyAnotherStoreWroteIsRefused(t *testing.T) {
	t.Parallel()
	prefix := server.Prefix()
	mine, _ := counted(t, prefix)
	theirs, _ := openOwn(t, prefix)
	require.NoError(t, theirs.Update(t.Context(), guard("log/001", 0, "theirs")))
	runs := 0
	err := mine.Update(t.Context(), func(tx store.Tx) error {
		runs++
		if _, err := tx.Put("other", []byte("mine")); err != nil {
			return err
		}
		return store.Create(tx, "log/001", []byte("mine"))
	})
	require.ErrorIs(t, err, store.ErrKeyExists)
	require.Equal(t, 2, runs, "the first run's Txn failed on the key's compare")
	requireAt(t, theirs, "log/001", "theirs", 1)
	require.Zero(t, count(t, theirs, "other"), "nothing of the refused change was written")
}
