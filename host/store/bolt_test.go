package store_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/storetest"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"
)

// openTemp opens a new store in a temporary directory, checks its pages
// and closes it when the test ends.
func openTemp(t *testing.T) *store.Bolt {
	t.Helper()
	s, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.Check())
		require.NoError(t, s.Close())
	})
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t) })
}

func TestOpenCreatesPrivateFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state", "flowgate")
	path := filepath.Join(dir, "flowgate.db")
	s, err := store.Open(path, store.Options{Owner: "flowgate test"})
	require.NoError(t, err)
	require.Equal(t, path, s.Path())

	for _, d := range []string{dir, filepath.Dir(dir)} {
		info, err := os.Stat(d)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), info.Mode().Perm(), d)
	}
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	holder, err := os.ReadFile(path + ".holder")
	require.NoError(t, err)
	require.Contains(t, string(holder), fmt.Sprintf(`"pid":%d`, os.Getpid()))
	require.Contains(t, string(holder), `"owner":"flowgate test"`)
	info, err = os.Stat(path + ".holder")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	require.NoError(t, s.Close())
	require.NoFileExists(t, path+".holder", "Close removes the holder file")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the store file is left")
}

// helperEnv names the store file TestHelperProcess holds open.
const helperEnv = "FLOWGATE_STORE_HELPER_PATH"

// TestHelperProcess is not a test: TestOpenLockedByOtherProcess runs the
// test binary again with it, to hold a store open in another process until
// its stdin closes.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		return
	}
	s, err := store.Open(path, store.Options{Owner: "store helper process"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	os.Exit(0)
}

func TestOpenLockedByOtherProcess(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			stdin.Close()
			require.NoError(t, cmd.Wait())
		}
	}
	t.Cleanup(stop)

	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case line := <-ready:
		require.Equal(t, "ready\n", line)
	case <-time.After(30 * time.Second):
		t.Fatal("helper process did not open the store")
	}

	start := time.Now()
	_, err = store.Open(path, store.Options{LockTimeout: 300 * time.Millisecond})
	elapsed := time.Since(start)
	require.ErrorIs(t, err, store.ErrLocked)
	require.Contains(t, err.Error(), fmt.Sprintf("in use by pid %d (store helper process, since ", cmd.Process.Pid))
	require.Contains(t, err.Error(), "stop it or wait for it to finish, then retry")
	// bbolt polls the lock every 50ms and gives up on the last poll
	// before the deadline.
	require.GreaterOrEqual(t, elapsed, 200*time.Millisecond, "Open waits about LockTimeout")
	require.Less(t, elapsed, 3*time.Second, "Open gives up soon after LockTimeout")

	stop()
	s, err := store.Open(path, store.Options{LockTimeout: 300 * time.Millisecond})
	require.NoError(t, err, "the store opens once the holder has gone")
	require.NoError(t, s.Close())
}

func TestOpenLockedInProcess(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	_, err := store.Open(s.Path(), store.Options{LockTimeout: 50 * time.Millisecond, Owner: "second"})
	require.ErrorIs(t, err, store.ErrLocked)
	require.Contains(t, err.Error(), fmt.Sprintf("pid %d", os.Getpid()))
	require.FileExists(t, s.Path()+".holder", "a failed Open leaves the holder's record alone")
	require.NoError(t, s.View(t.Context(), func(store.ReadTx) error { return nil }), "and the holder's store working")
}

// writeFlows fills the store at path with n records of size bytes each.
func writeFlows(t *testing.T, path string, n, size int) {
	t.Helper()
	s, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		for i := range n {
			if _, err := tx.Put(fmt.Sprintf("flow/%04d", i), bytes.Repeat([]byte{byte(i)}, size)); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, s.Close())
}

func TestOpenRefusesCorruptFile(t *testing.T) {
	t.Parallel()
	page := os.Getpagesize()
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	// valid returns a store file, cut to the pages its meta pages count:
	// bbolt grows files in chunks, and the unused tail may go unnoticed.
	valid := func(t *testing.T) []byte {
		path := filepath.Join(t.TempDir(), "valid.db")
		writeFlows(t, path, 200, 2000)
		db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
		require.NoError(t, err)
		var used int64
		require.NoError(t, db.View(func(tx *bbolt.Tx) error {
			used = tx.Size()
			return nil
		}))
		require.NoError(t, db.Close())
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		t.Logf("store file %d bytes, %d in use", len(data), used)
		return data[:used]
	}
	tests := []struct {
		name    string
		content func(t *testing.T) []byte
	}{
		{"random bytes", func(*testing.T) []byte { return random }},
		{"text file", func(*testing.T) []byte { return []byte("flows: []\n") }},
		{"truncated to half", func(t *testing.T) []byte { d := valid(t); return d[:len(d)/2] }},
		{"truncated to the meta pages", func(t *testing.T) []byte { return valid(t)[:2*page] }},
		{"truncated to one page", func(t *testing.T) []byte { return valid(t)[:page] }},
		{"meta pages zeroed", func(t *testing.T) []byte {
			d := valid(t)
			clear(d[:2*page])
			return d
		}},
		{"meta pages damaged", func(t *testing.T) []byte {
			d := valid(t)
			d[16+4]++ // the version field of both meta pages
			d[page+16+4]++
			return d
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "flowgate.db")
			content := tt.content(t)
			require.NoError(t, os.WriteFile(path, content, 0o600))

			_, err := store.Open(path, store.Options{LockTimeout: time.Second})
			require.ErrorIs(t, err, store.ErrCorrupt)
			require.Contains(t, err.Error(), path)
			require.Contains(t, err.Error(), "restore it from a backup, or move it aside")

			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.True(t, bytes.Equal(content, after), "the file is left byte for byte as it was")
			require.NoFileExists(t, path+".holder")
		})
	}
}

// A zero-length store file was cut short or overwritten (flowgate creates
// a store whole, see create): it is damaged, and never silently replaced
// by an empty store, by a writer or a reader.
func TestOpenRefusesEmptyFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	_, err := store.Open(path, store.Options{})
	require.ErrorIs(t, err, store.ErrCorrupt)
	require.Contains(t, err.Error(), "empty (0 bytes)")
	_, err = store.OpenReadOnly(path, store.Options{})
	require.ErrorIs(t, err, store.ErrCorrupt)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Zero(t, info.Size(), "the file is left as it was")
}

func TestOpenReopensData(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	writeFlows(t, path, 50, 100)
	s, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	defer s.Close()
	n := 0
	require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("flow/", store.ScanOptions{}, func(it store.Item) bool {
			n++
			return it.Revision == 1 && len(it.Value) == 100
		})
	}))
	require.Equal(t, 50, n)
}

func TestDamagedRecord(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	writeFlows(t, path, 1, 10)
	db, err := bbolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, db.Update(func(tx *bbolt.Tx) error {
		return tx.Bucket([]byte(store.BucketName)).Put([]byte("flow/0000"), []byte{1, 2, 3})
	}))
	require.NoError(t, db.Close())

	s, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	defer s.Close()
	err = s.View(t.Context(), func(tx store.ReadTx) error {
		_, err := tx.Get("flow/0000")
		return err
	})
	require.ErrorIs(t, err, store.ErrCorrupt)
	require.Contains(t, err.Error(), `record "flow/0000"`)
}

func TestClosed(t *testing.T) {
	t.Parallel()
	s, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")

	require.ErrorIs(t, s.View(t.Context(), func(store.ReadTx) error { return nil }), store.ErrClosed)
	require.ErrorIs(t, s.Update(t.Context(), func(store.Tx) error { return nil }), store.ErrClosed)
	_, err = s.WriteTo(io.Discard)
	require.ErrorIs(t, err, store.ErrClosed)
}

func TestCloseWaitsForUpdates(t *testing.T) {
	t.Parallel()
	s, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	release, done := holdWriter(t, s)

	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned while an Update was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-done, "the running Update commits")
	require.NoError(t, <-closed)
	require.ErrorIs(t, s.Update(t.Context(), func(store.Tx) error { return nil }), store.ErrClosed)
}

func TestValueTooLargeLeavesStoreUsable(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	err := s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("big", make([]byte, store.MaxValueSize+1))
		return err
	})
	require.ErrorIs(t, err, store.ErrValueTooLarge)
	require.Contains(t, err.Error(), `"big"`)
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("small", []byte("x"))
		return err
	}))
}

func TestLongKeyRefused(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	err := s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put(strings.Repeat("k", bbolt.MaxKeySize+1), nil)
		return err
	})
	require.ErrorContains(t, err, "key is too long")
}

func TestScanWhileWriting(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		for i := range 300 {
			if _, err := tx.Put(fmt.Sprintf("idx/queued/%03d", i), make([]byte, 100)); err != nil {
				return err
			}
		}
		return nil
	}))
	for _, reverse := range []bool{false, true} {
		var visited []string
		require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
			visited = nil
			var err error
			scanErr := tx.Scan("idx/queued/", store.ScanOptions{Reverse: reverse}, func(it store.Item) bool {
				visited = append(visited, it.Key)
				moved := strings.Replace(it.Key, "queued", "running", 1)
				if reverse {
					moved = strings.Replace(it.Key, "running", "queued", 1)
				}
				if err = tx.Delete(it.Key); err == nil {
					_, err = tx.Put(moved, it.Value)
				}
				return err == nil
			})
			return cmpErr(scanErr, err)
		}))
		require.Len(t, visited, 300, "every key visited once while moving them")
		for i, k := range visited {
			want := i
			if reverse {
				want = 299 - i
			}
			require.Equal(t, fmt.Sprintf("idx/queued/%03d", want), k)
		}
		if !reverse {
			// Move them back under the scanned prefix for the reverse pass.
			require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
				for i := range 300 {
					if err := tx.Delete(fmt.Sprintf("idx/running/%03d", i)); err != nil {
						return err
					}
					if _, err := tx.Put(fmt.Sprintf("idx/queued/%03d", i), nil); err != nil {
						return err
					}
				}
				return nil
			}))
		}
	}
}

// cmpErr returns the first non-nil error.
func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func TestWriteToMakesUsableBackup(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("flow/1", []byte("backed up"))
		return err
	}))
	backup := filepath.Join(t.TempDir(), "backup.db")
	f, err := os.Create(backup)
	require.NoError(t, err)
	n, err := s.WriteTo(f)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	info, err := os.Stat(backup)
	require.NoError(t, err)
	require.Equal(t, info.Size(), n)

	b, err := store.Open(backup, store.Options{})
	require.NoError(t, err)
	defer b.Close()
	var it store.Item
	require.NoError(t, b.View(t.Context(), func(tx store.ReadTx) error {
		var err error
		it, err = tx.Get("flow/1")
		return err
	}))
	require.Equal(t, "backed up", string(it.Value))
}

func TestOptions(t *testing.T) {
	t.Parallel()
	d := store.Options{}.WithDefaults()
	require.Equal(t, store.DefaultLockTimeout, d.LockTimeout)
	require.Equal(t, store.DefaultInitialMmapSize, d.InitialMmapSize)
	require.Equal(t, store.DefaultMaxBatch, d.MaxBatch)
	require.NotNil(t, d.Logger)
	require.NotEmpty(t, d.Owner)
	require.NoError(t, store.Options{}.Validate())

	for _, tt := range []struct {
		opts  store.Options
		field string
	}{
		{store.Options{LockTimeout: -1}, "Options.LockTimeout"},
		{store.Options{InitialMmapSize: -1}, "Options.InitialMmapSize"},
		{store.Options{MaxBatch: -1}, "Options.MaxBatch"},
	} {
		require.ErrorContains(t, tt.opts.Validate(), tt.field)
		_, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), tt.opts)
		require.ErrorContains(t, err, tt.field)
	}
}

func TestProbeFsync(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rate, err := store.ProbeFsync(dir, 20*time.Millisecond)
	require.NoError(t, err)
	require.Greater(t, rate, 0.0)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "the probe file is removed")

	_, err = store.ProbeFsync(dir, 0)
	require.Error(t, err)
	_, err = store.ProbeFsync(filepath.Join(dir, "missing"), time.Millisecond)
	require.Error(t, err)
}
