package storetest

import (
	"errors"
	"testing"

	"github.com/flowgate/flowgate/host/store"
	"github.com/stretchr/testify/require"
)

// testCreate: store.Create puts a key that does not exist at revision 1,
// refuses one that does (committed before, or written earlier in the same
// Update) with ErrKeyExists and writes nothing, and creates a key the
// same Update deleted.
func testCreate(t *testing.T, s store.Store) {
	create := func(key, value string) error {
		return s.Update(t.Context(), func(tx store.Tx) error { return store.Create(tx, key, []byte(value)) })
	}
	require.NoError(t, create("log/1", "a"))
	it := mustGet(t, s, "log/1")
	require.Equal(t, "a", string(it.Value))
	require.Equal(t, int64(1), it.Revision)

	err := create("log/1", "b")
	require.ErrorIs(t, err, store.ErrKeyExists, "a committed key")
	require.Equal(t, "a", string(mustGet(t, s, "log/1").Value), "a refused Create writes nothing")

	err = s.Update(t.Context(), func(tx store.Tx) error {
		if _, err := tx.Put("log/2", []byte("x")); err != nil {
			return err
		}
		return store.Create(tx, "log/2", []byte("y"))
	})
	require.ErrorIs(t, err, store.ErrKeyExists, "a key written earlier in the Update")
	_, err = get(t, s, "log/2")
	require.True(t, errors.Is(err, store.ErrKeyNotFound), "the failed Update rolled back")

	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.Delete("log/1"); err != nil {
			return err
		}
		return store.Create(tx, "log/1", []byte("c"))
	}))
	require.Equal(t, "c", string(mustGet(t, s, "log/1").Value), "a key deleted in the same Update")
}
