package store_test

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
)

// sealedStore writes a store of 300 flows at a new path and returns it
// once its writer has sealed it and closed.
func sealedStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	writeFlows(t, path, 300, 200)
	s, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return store.Sealed(path) }, 10*time.Second, time.Millisecond,
		"a writer seals the file once its last change settles")
	require.NoError(t, s.Close())
	require.True(t, store.Sealed(path))
	return path
}

// An open of a file its last writer sealed reads only its meta pages, and
// finds every record; the seal is written while the writer runs, so a
// writer killed with kill -9 leaves it too.
func TestSealSparesTheWalkOfAnUnchangedStore(t *testing.T) {
	t.Parallel()
	path := sealedStore(t)
	var log bytes.Buffer
	s, err := store.Open(path, store.Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &log, Level: hclog.Info})})
	require.NoError(t, err)
	require.Contains(t, log.String(), "sealed=true")
	n := 0
	require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("flow/", store.ScanOptions{}, func(store.Item) bool { n++; return true })
	}))
	require.Equal(t, 300, n)

	before, err := os.ReadFile(path + store.SealSuffix)
	require.NoError(t, err)
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error { _, err := tx.Put("flow/new", []byte("x")); return err }))
	require.Eventually(t, func() bool {
		now, err := os.ReadFile(path + store.SealSuffix)
		return err == nil && !bytes.Equal(now, before) && store.Sealed(path)
	}, 10*time.Second, time.Millisecond, "the running writer seals its own commit")
	require.NoError(t, s.Close())
}

// Every kind of damage the damaged-store suites make, done to a sealed
// file in place, breaks the seal: the open reads every page again and
// refuses the file, leaving it as it was.
func TestDamageBreaksTheSeal(t *testing.T) {
	t.Parallel()
	page := os.Getpagesize()
	leafOf := func(t *testing.T, path string, data []byte) int {
		root, err := store.KVRoot(path)
		require.NoError(t, err)
		return int(binary.LittleEndian.Uint64(data[int(root)*page+16+8:])) * page
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, path string, data []byte) []byte
	}{
		{"looped tree", func(t *testing.T, path string, data []byte) []byte {
			root, err := store.KVRoot(path)
			require.NoError(t, err)
			binary.LittleEndian.PutUint64(data[int(root)*page+16+8:], root)
			return data
		}},
		{"overlong record", func(t *testing.T, path string, data []byte) []byte {
			binary.LittleEndian.PutUint32(data[leafOf(t, path, data)+16+12:], 900<<20)
			return data
		}},
		{"leaf type flags", func(t *testing.T, path string, data []byte) []byte {
			copy(data[leafOf(t, path, data)+8:], []byte{0x40, 0})
			return data
		}},
		{"truncated to half", func(_ *testing.T, _ string, data []byte) []byte { return data[:len(data)/2] }},
		{"meta pages damaged", func(_ *testing.T, _ string, data []byte) []byte {
			data[16+4]++
			data[page+16+4]++
			return data
		}},
		{"random bytes", func(_ *testing.T, _ string, data []byte) []byte {
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			return data
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := sealedStore(t)
			info, err := os.Stat(path)
			require.NoError(t, err)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			damaged := tt.damage(t, path, data)
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			require.NoError(t, err)
			_, err = f.Write(damaged)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			// An edit that puts the modification time back is still seen.
			require.NoError(t, os.Chtimes(path, info.ModTime(), info.ModTime()))
			require.False(t, store.Sealed(path))

			_, err = store.Open(path, store.Options{LockTimeout: time.Second})
			require.ErrorIs(t, err, store.ErrCorrupt)
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, damaged, after, "the file is left byte for byte as it was")
		})
	}
}

// A seal vouches only for the file it was written for: a copy of a sealed
// store, or a file moved over it, is walked, seal and all.
func TestSealDoesNotTravel(t *testing.T) {
	t.Parallel()
	path := sealedStore(t)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	seal, err := os.ReadFile(path + store.SealSuffix)
	require.NoError(t, err)
	cp := filepath.Join(t.TempDir(), "flowgate.db")
	require.NoError(t, os.WriteFile(cp, data, 0o600))
	require.NoError(t, os.WriteFile(cp+store.SealSuffix, seal, 0o600))
	require.False(t, store.Sealed(cp), "a copy is another file")

	moved := filepath.Join(filepath.Dir(path), "other.db")
	require.NoError(t, os.WriteFile(moved, data, 0o600))
	require.NoError(t, os.Rename(moved, path))
	require.False(t, store.Sealed(path), "a file moved over the store is another file")

	require.NoError(t, os.WriteFile(path+store.SealSuffix, seal[:40], 0o600))
	require.False(t, store.Sealed(path), "a torn seal vouches for nothing")
}

// A file that another program writes while a writer holds it (the lock
// is only advisory) is never sealed by that writer: its seal is removed,
// and the next open walks and refuses the damage.
func TestAnOutsideWriteSpoilsTheSeal(t *testing.T) {
	t.Parallel()
	path := sealedStore(t)
	s, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	root, err := store.KVRoot(path)
	require.NoError(t, err)
	page := os.Getpagesize()
	leaf := int64(binary.LittleEndian.Uint64(data[int(root)*page+16+8:])) * int64(page)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{0x40, 0}, leaf+8)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	require.Eventually(t, func() bool {
		_, err := os.Stat(path + store.SealSuffix)
		return os.IsNotExist(err)
	}, 10*time.Second, time.Millisecond, "the writer removes the seal of a file it did not write")
	require.NoError(t, s.Close())
	require.False(t, store.Sealed(path))
	_, err = store.Open(path, store.Options{})
	require.ErrorIs(t, err, store.ErrCorrupt)
}
