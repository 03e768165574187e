package store_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
)

// loopedCopy copies the store at src and points the first child of its kv
// bucket's root branch page back at that page, a loop bbolt follows
// forever.
func loopedCopy(t *testing.T, src string) string {
	t.Helper()
	root, err := store.KVRoot(src)
	require.NoError(t, err)
	ps, err := store.PageSize(src)
	require.NoError(t, err)
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	page := data[int(root)*ps:]
	require.Equal(t, uint16(0x01), binary.LittleEndian.Uint16(page[8:]), "the kv root is a branch page")
	binary.LittleEndian.PutUint64(page[16+8:], root) // element 0's child
	dst := filepath.Join(t.TempDir(), "looped.db")
	require.NoError(t, os.WriteFile(dst, data, 0o600))
	return dst
}

// A tree that loops back on itself is refused by every open and reported
// by the check, within a bound: bbolt alone recurses until the process
// runs out of memory.
func TestLoopedTreeIsDamaged(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	writeFlows(t, path, 300, 200)
	looped := loopedCopy(t, path)

	_, err := store.Open(looped, store.Options{})
	require.ErrorIs(t, err, store.ErrCorrupt)
	require.Contains(t, err.Error(), "referenced twice")
	_, err = store.OpenReadOnly(looped, store.Options{})
	require.ErrorIs(t, err, store.ErrCorrupt)

	rep, err := store.CheckFile(looped, store.Options{})
	require.NoError(t, err, "page damage is a finding, not an error")
	require.NotEmpty(t, rep.Problems)
	require.Contains(t, rep.Problems[0], "referenced twice")
}

// fault is the panic value debug.SetPanicOnFault makes of a memory fault
// at an address, such as a read past the end of the file's map.
type fault struct{}

func (fault) Error() string { return "unexpected fault address 0x7f0000001000" }
func (fault) RuntimeError() {}
func (fault) Addr() uintptr { return 0x7f0000001000 }

// A memory fault becomes an error wrapping ErrCorrupt, not a dead
// process; a panic that is not damage (a bug in the caller's function)
// goes on unwinding. (An assertion inside bbolt is damage too: see
// TestDamageFoundWhileOpenStopsWrites.)
func TestGuardTurnsFaultsIntoDamage(t *testing.T) {
	t.Parallel()
	err := store.Guard("/x/flowgate.db", func() error { panic(fault{}) })
	require.ErrorIs(t, err, store.ErrCorrupt)
	require.Contains(t, err.Error(), "unexpected fault address")
	require.Contains(t, err.Error(), "flowgate check --salvage")

	require.PanicsWithValue(t, "a bug", func() {
		_ = store.Guard("/x/flowgate.db", func() error { panic("a bug") })
	})
	require.NoError(t, store.Guard("/x/flowgate.db", func() error { return nil }))
}

// Salvage copies every record it can read, with its revision, into a new
// store and names what it lost.
func TestSalvage(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	writeFlows(t, path, 300, 200)
	damaged := corruptLeaf(t, path)
	before, err := os.ReadFile(damaged)
	require.NoError(t, err)

	out := filepath.Join(t.TempDir(), "salvaged.db")
	rep, err := store.Salvage(damaged, out, store.SalvageOptions{})
	require.NoError(t, err)
	require.Equal(t, out, rep.Path)
	require.NotEmpty(t, rep.Lost)
	require.NotEmpty(t, rep.Problems)
	require.Positive(t, rep.Copied["flow"])
	lost := 0
	for _, n := range rep.LostByKind {
		lost += n
	}
	require.Equal(t, len(rep.Lost), lost)
	require.Less(t, rep.Copied["flow"], 300, "the damaged page's records are lost")
	require.Equal(t, "flow", store.KeyKindOf(rep.Lost[0].Key), "the parent page names the lost page's first key")

	after, err := os.ReadFile(damaged)
	require.NoError(t, err)
	require.Equal(t, before, after, "salvage changes nothing in the damaged file")

	check, err := store.CheckFile(out, store.Options{})
	require.NoError(t, err)
	require.Empty(t, check.Problems)
	require.Equal(t, rep.Copied, check.Keys)
	s, err := store.Open(out, store.Options{LockTimeout: time.Second})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("flow/", store.ScanOptions{}, func(it store.Item) bool {
			require.Equal(t, int64(1), it.Revision, "the revision is kept")
			return true
		})
	}))

	_, err = store.Salvage(damaged, out, store.SalvageOptions{})
	require.ErrorIs(t, err, os.ErrExist, "an existing file is never replaced")
}

// A record whose length a damaged leaf page overstates is refused as
// damage before it is copied, not read into gigabytes of memory.
func TestOverlongRecordIsDamaged(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	writeFlows(t, path, 300, 200)
	root, err := store.KVRoot(path)
	require.NoError(t, err)
	ps, err := store.PageSize(path)
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	leafID := binary.LittleEndian.Uint64(data[int(root)*ps+16+8:]) // the root branch's first child
	leaf := data[int(leafID)*ps:]
	require.Equal(t, uint16(0x02), binary.LittleEndian.Uint16(leaf[8:]), "the first child is a leaf page")
	binary.LittleEndian.PutUint32(leaf[16+12:], 900<<20) // element 0's value: 900 MiB
	damaged := filepath.Join(t.TempDir(), "damaged.db")
	require.NoError(t, os.WriteFile(damaged, data, 0o600))

	r, err := store.OpenReadOnly(damaged, store.Options{})
	require.NoError(t, err, "a reader walks the branch pages only")
	defer r.Close()
	err = r.View(t.Context(), func(tx store.ReadTx) error {
		_, err := tx.Get("flow/0000")
		return err
	})
	require.ErrorIs(t, err, store.ErrCorrupt)
	require.Contains(t, err.Error(), "more than flowgate ever writes")
}

// openThenDamage opens a store of 300 flows and then, while it is open,
// breaks the type flags of the leaf page that holds flow/0000. It returns
// the store, that page's id and the damaged file's bytes.
func openThenDamage(t *testing.T) (*store.Bolt, uint64, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	writeFlows(t, path, 300, 200)
	root, err := store.KVRoot(path)
	require.NoError(t, err)
	ps, err := store.PageSize(path)
	require.NoError(t, err)
	s, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })

	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	head := make([]byte, 32)
	_, err = f.ReadAt(head, int64(root)*int64(ps)+16) // the root branch's first element
	require.NoError(t, err)
	leafID := binary.LittleEndian.Uint64(head[8:])
	_, err = f.WriteAt([]byte{0x40, 0}, int64(leafID)*int64(ps)+8) // its type flags
	require.NoError(t, err)
	require.NoError(t, f.Close())
	damaged, err := os.ReadFile(path)
	require.NoError(t, err)
	return s, leafID, damaged
}

// A page damaged while the store is open fails the read or write that
// meets it with an error naming the page, and from then on the store
// takes no writes, so that bbolt does not spread the damage.
func TestDamageFoundWhileOpenStopsWrites(t *testing.T) {
	t.Parallel()
	get := func(tx store.ReadTx) error {
		_, err := tx.Get("flow/0000")
		return err
	}
	for name, meet := range map[string]func(s *store.Bolt) error{
		"view":   func(s *store.Bolt) error { return s.View(t.Context(), get) },
		"update": func(s *store.Bolt) error { return s.Update(t.Context(), func(tx store.Tx) error { return get(tx) }) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, leafID, damaged := openThenDamage(t)
			err := meet(s)
			require.ErrorIs(t, err, store.ErrCorrupt)
			require.Contains(t, err.Error(), fmt.Sprintf("damaged at page %d", leafID))
			err = s.Update(t.Context(), func(tx store.Tx) error {
				_, err := tx.Put("flow/new", []byte("x"))
				return err
			})
			require.ErrorIs(t, err, store.ErrCorrupt)
			require.Contains(t, err.Error(), "takes no more writes")
			after, err := os.ReadFile(s.Path())
			require.NoError(t, err)
			require.Equal(t, damaged, after, "nothing is written to the damaged file")
		})
	}
}

// A file cut short is walked up to where it ends: the pages past the end
// are reported lost (here the tree's root, which bbolt writes last), never
// "nothing lost".
func TestSalvageTruncated(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	writeFlows(t, path, 300, 200)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	cut := filepath.Join(t.TempDir(), "cut.db")
	require.NoError(t, os.WriteFile(cut, data[:len(data)*2/3], 0o600))

	rep, err := store.Salvage(cut, filepath.Join(t.TempDir(), "salvaged.db"), store.SalvageOptions{})
	require.NoError(t, err)
	require.Contains(t, rep.Problems[0], "truncated")
	require.NotEmpty(t, rep.Lost)
	require.Contains(t, rep.Lost[0].Reason, "cannot be read")
	require.Less(t, rep.Copied["flow"], 300)
}

// The walk's bound on a page's size leaves room for the largest records:
// values of MaxValueSize side by side (bbolt keeps up to four on a page)
// open and check clean.
func TestLargestRecordsPassTheWalk(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	s, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		for _, k := range []string{"flow/a", "flow/b", "flow/c", "flow/d", "flow/e", "flow/f"} {
			if _, err := tx.Put(k, make([]byte, store.MaxValueSize)); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, s.Close())
	s, err = store.Open(path, store.Options{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	rep, err := store.CheckFile(path, store.Options{})
	require.NoError(t, err)
	require.Empty(t, rep.Problems)
}
