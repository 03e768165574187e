package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/storetest"
)

// corruptLeaf returns the path of a damaged copy of the store file at src.
func corruptLeaf(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "damaged.db")
	storetest.CorruptLeafCopy(t, src, dst)
	return dst
}

func TestCheckFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	writeFlows(t, path, 300, 200)

	rep, err := store.CheckFile(path, store.Options{})
	require.NoError(t, err)
	require.Empty(t, rep.Problems)
	require.Equal(t, map[string]int{"flow": 300}, rep.Keys)
	require.Positive(t, rep.Revision)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, info.Size(), rep.Size)

	damaged := corruptLeaf(t, path)
	before, err := os.ReadFile(damaged)
	require.NoError(t, err)
	rep, err = store.CheckFile(damaged, store.Options{})
	require.NoError(t, err, "page damage is a finding, not an error")
	require.NotEmpty(t, rep.Problems)
	require.Contains(t, rep.Problems[0], "unexpected type")
	require.Nil(t, rep.Keys, "a damaged file is not walked")
	after, err := os.ReadFile(damaged)
	require.NoError(t, err)
	require.True(t, bytes.Equal(before, after), "checking changes nothing")

	_, err = store.Open(damaged, store.Options{})
	require.ErrorIs(t, err, store.ErrCorrupt, "Open walks the tree's pages and refuses a damaged one")
	require.Contains(t, err.Error(), "damaged: page ")
	require.Contains(t, err.Error(), "flowgate check --salvage")

	_, err = store.CheckFile(filepath.Join(t.TempDir(), "missing.db"), store.Options{})
	require.ErrorIs(t, err, fs.ErrNotExist)
}

func TestOpenReadOnly(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	writeFlows(t, path, 3, 10)
	r, err := store.OpenReadOnly(path, store.Options{})
	require.NoError(t, err)
	n := 0
	require.NoError(t, r.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("flow/", store.ScanOptions{}, func(store.Item) bool { n++; return true })
	}))
	require.Equal(t, 3, n)
	require.ErrorIs(t, r.Update(t.Context(), func(store.Tx) error { return nil }), store.ErrReadOnly)
	problems, err := r.PageProblems()
	require.NoError(t, err)
	require.Empty(t, problems)
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "Close is idempotent")
	require.ErrorIs(t, r.View(t.Context(), func(store.ReadTx) error { return nil }), store.ErrClosed)
	_, err = r.WriteTo(io.Discard)
	require.ErrorIs(t, err, store.ErrClosed)

	notStore := filepath.Join(t.TempDir(), "other.db")
	db, err := bbolt.Open(notStore, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, err = store.OpenReadOnly(notStore, store.Options{})
	require.ErrorIs(t, err, store.ErrCorrupt, "a bbolt file that is not a flowgate store")
}

// backupSource returns a store with some flows, closed when the test ends.
func backupSource(t *testing.T) *store.Bolt {
	t.Helper()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	writeFlows(t, path, 50, 100)
	s, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestWriteBackup(t *testing.T) {
	t.Parallel()
	s := backupSource(t)
	path := filepath.Join(t.TempDir(), "backup.db")
	rep, err := store.WriteBackup(path, store.BackupOptions{Live: s.Path()}, s.WriteTo)
	require.NoError(t, err)
	require.Equal(t, path, rep.Path)
	require.Equal(t, map[string]int{"flow": 50}, rep.Keys)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, info.Size(), rep.Size)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "a backup holds the records: private")
	requireOnly(t, filepath.Dir(path), "backup.db")

	b, err := store.OpenReadOnly(path, store.Options{})
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, b.View(t.Context(), func(tx store.ReadTx) error {
		_, err := tx.Get("flow/0049")
		return err
	}))
}

func TestWriteBackupRefusals(t *testing.T) {
	t.Parallel()
	s := backupSource(t)
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.db")
	require.NoError(t, os.WriteFile(existing, []byte("keep me"), 0o600))

	_, err := store.WriteBackup(existing, store.BackupOptions{Live: s.Path()}, s.WriteTo)
	require.ErrorIs(t, err, fs.ErrExist)
	require.ErrorContains(t, err, "--force")
	got, err := os.ReadFile(existing)
	require.NoError(t, err)
	require.Equal(t, "keep me", string(got), "the existing file is left alone")

	rep, err := store.WriteBackup(existing, store.BackupOptions{Live: s.Path(), Force: true}, s.WriteTo)
	require.NoError(t, err, "Force replaces it")
	require.Equal(t, 50, rep.Keys["flow"])
	requireOnly(t, dir, "existing.db")

	for _, live := range []string{s.Path(), s.Path() + ".holder"} {
		before, _ := os.ReadFile(live)
		_, err = store.WriteBackup(live, store.BackupOptions{Live: s.Path(), Force: true}, s.WriteTo)
		require.ErrorContains(t, err, "is the live store")
		after, _ := os.ReadFile(live)
		require.True(t, bytes.Equal(before, after))
	}
	link := filepath.Join(dir, "link.db")
	require.NoError(t, os.Symlink(s.Path(), link))
	_, err = store.WriteBackup(link, store.BackupOptions{Live: s.Path(), Force: true}, s.WriteTo)
	require.ErrorContains(t, err, "is the live store", "a link to the live store is the live store")
}

func TestWriteBackupLeavesNothingOnFailure(t *testing.T) {
	t.Parallel()
	s := backupSource(t)
	boom := errors.New("boom")
	cases := []struct {
		name  string
		write func(io.Writer) (int64, error)
		want  error
	}{
		{"the copy breaks off", func(w io.Writer) (int64, error) {
			n, _ := s.WriteTo(&limitWriter{w: w, left: 10000})
			return n, boom
		}, boom},
		{"the copy is not a store", func(w io.Writer) (int64, error) {
			n, err := w.Write(bytes.Repeat([]byte("x"), 1<<16))
			return int64(n), err
		}, store.ErrCorrupt},
		{"the copy is short", func(w io.Writer) (int64, error) {
			return s.WriteTo(&limitWriter{w: w, left: 3 * os.Getpagesize(), quiet: true})
		}, store.ErrCorrupt},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			_, err := store.WriteBackup(filepath.Join(dir, "backup.db"), store.BackupOptions{}, tt.write)
			require.ErrorIs(t, err, tt.want)
			requireOnly(t, dir)
		})
	}

	t.Run("the directory is missing", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "missing")
		_, err := store.WriteBackup(filepath.Join(dir, "backup.db"), store.BackupOptions{}, s.WriteTo)
		require.ErrorIs(t, err, fs.ErrNotExist)
		require.NoDirExists(t, dir)
	})
	t.Run("the directory is not writable", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() == 0 {
			t.Skip("root writes to any directory")
		}
		dir := t.TempDir()
		require.NoError(t, os.Chmod(dir, 0o500))
		t.Cleanup(func() { os.Chmod(dir, 0o700) })
		_, err := store.WriteBackup(filepath.Join(dir, "backup.db"), store.BackupOptions{}, s.WriteTo)
		require.ErrorIs(t, err, fs.ErrPermission)
		requireOnly(t, dir)
	})
}

// limitWriter passes on the first left bytes, then fails (or, quiet,
// drops the rest and reports success, like a disk that lies).
type limitWriter struct {
	w     io.Writer
	left  int
	quiet bool
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if len(p) > l.left {
		n, _ := l.w.Write(p[:l.left])
		l.left = 0
		if l.quiet {
			return len(p), nil
		}
		return n, io.ErrShortWrite
	}
	l.left -= len(p)
	return l.w.Write(p)
}

// requireOnly requires dir to hold exactly the named entries.
func requireOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	got := []string{}
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if names == nil {
		names = []string{}
	}
	require.ElementsMatch(t, names, got)
}

// TestPageProblemsWhileWriting checks a store that writers keep changing:
// the free-page list moves under the check, which must not take that for
// damage.
func TestPageProblemsWhileWriting(t *testing.T) {
	t.Parallel()
	s := backupSource(t)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := s.Update(t.Context(), func(tx store.Tx) error {
				_, err := tx.Put(fmt.Sprintf("flow/%04d", i%50), bytes.Repeat([]byte{byte(i)}, 500))
				return err
			}); err != nil {
				done <- err
				return
			}
		}
	}()
	for range 50 {
		problems, err := s.PageProblems()
		require.NoError(t, err)
		require.Empty(t, problems)
	}
	close(stop)
	require.NoError(t, <-done)
}
