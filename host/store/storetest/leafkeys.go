package storetest

import (
	"encoding/binary"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"
)

// LeafKeys returns the keys held by the leaf pages of the bbolt store file
// at path that bbolt counts in use (not free) and that end before byte
// limit: the records a copy of the file cut at limit still holds whole.
// It reads page types with bbolt's own Tx.Page and the keys with bbolt's
// leaf element layout (flags, pos, ksize, vsize; pos counted from the
// element), apart from the store's page walk, so that a test can hold a
// salvage against it.
func LeafKeys(t testing.TB, path string, limit int64) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, PreLoadFreelist: true})
	require.NoError(t, err)
	defer db.Close()
	ps := int64(db.Info().PageSize)
	var keys []string
	require.NoError(t, db.View(func(tx *bbolt.Tx) error {
		for id := int64(2); (id+1)*ps <= limit; id++ {
			p, err := tx.Page(int(id))
			if err != nil {
				return err
			}
			if p == nil || p.Type != "leaf" || (id+int64(p.OverflowCount)+1)*ps > limit {
				continue
			}
			for i := range int64(p.Count) {
				at := id*ps + 16 + i*16
				flags, pos, ksize := binary.LittleEndian.Uint32(data[at:]), int64(binary.LittleEndian.Uint32(data[at+4:])), int64(binary.LittleEndian.Uint32(data[at+8:]))
				if flags&0x01 == 0 { // not a bucket
					keys = append(keys, string(data[at+pos:at+pos+ksize]))
				}
			}
		}
		return nil
	}))
	return keys
}
