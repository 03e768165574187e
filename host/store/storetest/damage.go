package storetest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/flowgate/flowgate/host/store"
)

// CorruptLeafCopy copies the bbolt store file src to dst and damages the
// copy the way a bad disk block does: it overwrites the type of the first
// leaf page in use, which bbolt's page check reports. For tests of the
// file-level checks (flowgate check, backup verification).
func CorruptLeafCopy(t testing.TB, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dst, data, 0o600))
	db, err := bbolt.Open(dst, 0o600, &bbolt.Options{ReadOnly: true, PreLoadFreelist: true})
	require.NoError(t, err)
	leaf, pageSize := -1, db.Info().PageSize
	require.NoError(t, db.View(func(tx *bbolt.Tx) error {
		for id := 2; int64(id*pageSize) < tx.Size() && leaf < 0; id++ {
			p, err := tx.Page(id)
			if err != nil {
				return err
			}
			if p != nil && p.Type == "leaf" {
				leaf = id
			}
		}
		return nil
	}))
	require.NoError(t, db.Close())
	require.GreaterOrEqual(t, leaf, 2, "the file has a leaf page")
	f, err := os.OpenFile(dst, os.O_WRONLY, 0)
	require.NoError(t, err)
	var flags [2]byte
	binary.LittleEndian.PutUint16(flags[:], 0x40) // no page type has this flag
	_, err = f.WriteAt(flags[:], int64(leaf*pageSize)+8)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// FillAndFree writes n keys of 1 KiB under prefix ("prefix%06d") in
// commits of 500, then deletes all but every tenth, so that most of the
// store file is free pages: the state compaction is for. With n = 20,000
// that is about 20 MiB written and 2,000 keys kept.
func FillAndFree(t testing.TB, s store.Store, prefix string, n int) {
	t.Helper()
	val := make([]byte, 1024)
	for i := 0; i < n; i += 500 {
		require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
			for j := i; j < min(i+500, n); j++ {
				if _, err := tx.Put(fmt.Sprintf("%s%06d", prefix, j), val); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		for j := range n {
			if j%10 != 0 {
				if err := tx.Delete(fmt.Sprintf("%s%06d", prefix, j)); err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

// PutRaw writes value at key directly, under whatever keeps the records:
// the damage a bug, a manual edit or a torn restore leaves (a record that
// does not decode, an index entry without its record).
func PutRaw(t testing.TB, s store.Store, key string, value []byte) {
	t.Helper()
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put(key, value)
		return err
	}))
}

// EditRecord rewrites the JSON object stored at key with fields set over
// it (a nil value removes the field), directly in the store: a record the
// engine could never have written, such as a flow with status "done". It
// returns the bytes it wrote.
func EditRecord(t testing.TB, s store.Store, key string, fields map[string]any) []byte {
	t.Helper()
	var out []byte
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		it, err := tx.Get(key)
		if err != nil {
			return err
		}
		rec := map[string]any{}
		if err := json.Unmarshal(it.Value, &rec); err != nil {
			return err
		}
		for k, v := range fields {
			if v == nil {
				delete(rec, k)
			} else {
				rec[k] = v
			}
		}
		if out, err = json.Marshal(rec); err != nil {
			return err
		}
		_, err = tx.Put(key, out)
		return err
	}))
	return out
}
