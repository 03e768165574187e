package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// putN writes n keys "prefix%03d" in one Update.
func putN(ctx context.Context, s store.Store, prefix string, n, size int) error {
	return s.Update(ctx, func(tx store.Tx) error {
		for i := range n {
			if _, err := tx.Put(fmt.Sprintf("%s%03d", prefix, i), make([]byte, size)); err != nil {
				return err
			}
		}
		return nil
	})
}

// mustGet reads key in its own View.
func mustGet(t *testing.T, s store.Store, key string) store.Item {
	t.Helper()
	var it store.Item
	require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
		var err error
		it, err = tx.Get(key)
		return err
	}))
	return it
}

// count returns how many keys start with prefix.
func count(t *testing.T, s store.Store, prefix string) int {
	t.Helper()
	n := 0
	require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan(prefix, store.ScanOptions{}, func(store.Item) bool { n++; return true })
	}))
	return n
}

func TestChangeOverEtcdLimitsIsRefusedWhole(t *testing.T) {
	t.Parallel()
	s := server.Open(t)
	require.NoError(t, putN(t.Context(), s, "ok/", etcd.DefaultMaxTxnOps, 10), "128 writes fit in one Txn")
	require.Equal(t, etcd.DefaultMaxTxnOps, count(t, s, "ok/"))

	err := putN(t.Context(), s, "many/", etcd.DefaultMaxTxnOps+1, 10)
	require.ErrorIs(t, err, store.ErrTxnTooLarge)
	require.Contains(t, err.Error(), "writes 129 keys")
	require.Contains(t, err.Error(), "nothing was written")
	require.Zero(t, count(t, s, "many/"))

	err = putN(t.Context(), s, "big/", 2, store.MaxValueSize)
	require.ErrorIs(t, err, store.ErrTxnTooLarge)
	require.Contains(t, err.Error(), "--max-request-bytes")
	require.Zero(t, count(t, s, "big/"))
}

// TestServerLimitsLowerThanOptions: a cluster started with a lower
// --max-txn-ops than the store was told refuses the Txn itself, and the
// error says which setting to align.
func TestServerLimitsLowerThanOptions(t *testing.T) {
	t.Parallel()
	s := server.Open(t, etcd.Options{MaxTxnOps: 1000})
	err := putN(t.Context(), s, "k/", etcd.DefaultMaxTxnOps+1, 1)
	require.ErrorIs(t, err, store.ErrTxnTooLarge)
	require.Contains(t, err.Error(), "MaxTxnOps")
	require.Zero(t, count(t, s, "k/"))
}

// interfere runs change in a store of its own (another writer) the first
// time the returned Update function runs, after fn read; it counts runs.
func interfere(t *testing.T, other store.Store, change func(store.Tx) error, fn func(store.Tx) error) (func(store.Tx) error, *int) {
	runs := 0
	return func(tx store.Tx) error {
		runs++
		if err := fn(tx); err != nil {
			return err
		}
		if runs == 1 {
			require.NoError(t, other.Update(t.Context(), change))
		}
		return nil
	}, &runs
}

// TestConflictsRunTheChangeAgain: a change whose reads another writer
// changes before it commits runs again on the new state, whatever it read:
// a key it got, a key a scan passed on, or a range a new key appeared in.
func TestConflictsRunTheChangeAgain(t *testing.T) {
	t.Parallel()
	put := func(key, v string) func(store.Tx) error {
		return func(tx store.Tx) error { _, err := tx.Put(key, []byte(v)); return err }
	}
	del := func(key string) func(store.Tx) error {
		return func(tx store.Tx) error { return tx.Delete(key) }
	}
	for name, tt := range map[string]struct {
		read   func(tx store.ReadTx) error
		change func(store.Tx) error
	}{
		"got key changed": {func(tx store.ReadTx) error { _, err := tx.Get("set/a"); return err }, put("set/a", "2")},
		"got key deleted": {func(tx store.ReadTx) error { _, err := tx.Get("set/a"); return ignoreMissing(err) }, del("set/a")},
		"absent key created": {func(tx store.ReadTx) error {
			_, err := tx.Get("set/new")
			return ignoreMissing(err)
		}, put("set/new", "1")},
		"scanned key changed":          {scanAll("set/"), put("set/b", "2")},
		"scanned key deleted":          {scanAll("set/"), del("set/b")},
		"key created in scanned range": {scanAll("set/"), put("set/c", "1")},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			prefix := server.Prefix()
			mine, err := etcd.New(server.Client(), etcd.Options{Prefix: prefix})
			require.NoError(t, err)
			other, err := etcd.New(server.Client(), etcd.Options{Prefix: prefix})
			require.NoError(t, err)
			require.NoError(t, mine.Update(t.Context(), func(tx store.Tx) error {
				for _, k := range []string{"set/a", "set/b"} {
					if _, err := tx.Put(k, []byte("1")); err != nil {
						return err
					}
				}
				return nil
			}))
			fn, runs := interfere(t, other, tt.change, func(tx store.Tx) error {
				if err := tt.read(tx); err != nil {
					return err
				}
				_, err := tx.Put("out", []byte("x"))
				return err
			})
			require.NoError(t, mine.Update(t.Context(), fn))
			require.Equal(t, 2, *runs, "the change ran again after the conflict")
		})
	}
}

// TestScanOutsideChangesDoesNotConflict: writes beside what a change read
// let it commit at once.
func TestScanOutsideChangesDoesNotConflict(t *testing.T) {
	t.Parallel()
	s := server.Open(t)
	require.NoError(t, putN(t.Context(), s, "set/", 3, 1))
	fn, runs := interfere(t, s, func(tx store.Tx) error {
		_, err := tx.Put("other/x", []byte("1"))
		return err
	}, func(tx store.Tx) error {
		if err := scanAll("set/")(tx); err != nil {
			return err
		}
		_, err := tx.Put("out", []byte("x"))
		return err
	})
	require.NoError(t, s.Update(t.Context(), fn))
	require.Equal(t, 1, *runs)
}

func scanAll(prefix string) func(store.ReadTx) error {
	return func(tx store.ReadTx) error {
		return tx.Scan(prefix, store.ScanOptions{}, func(store.Item) bool { return true })
	}
}

func ignoreMissing(err error) error {
	if errors.Is(err, store.ErrKeyNotFound) {
		return nil
	}
	return err
}

func TestPrefixesAreSeparateInstallations(t *testing.T) {
	t.Parallel()
	a, b := server.Open(t), server.Open(t)
	require.NoError(t, putN(t.Context(), a, "k/", 3, 1))
	require.Equal(t, 3, count(t, a, ""))
	require.Zero(t, count(t, b, ""), "another prefix sees nothing of it")

	raw, err := server.Client().Get(context.Background(), a.(*etcd.Store).Prefix(), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	require.NoError(t, err)
	require.Len(t, raw.Kvs, 3)
	for _, kv := range raw.Kvs {
		require.True(t, strings.HasPrefix(string(kv.Key), a.(*etcd.Store).Prefix()+"k/"), "key %q", kv.Key)
	}
}

// TestDeleteAndRewriteInOneChange: etcd sees the last write of the key
// only, a Put, which continues its Version (see the package doc).
func TestDeleteAndRewriteInOneChange(t *testing.T) {
	t.Parallel()
	s := server.Open(t)
	require.NoError(t, putN(t.Context(), s, "k/", 1, 1))
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.Delete("k/000"); err != nil {
			return err
		}
		_, err := tx.Put("k/000", []byte("again"))
		return err
	}))
	it := mustGet(t, s, "k/000")
	require.Equal(t, "again", string(it.Value))
	require.Equal(t, int64(2), it.Revision)
}

func TestClosedStoreRefusesCalls(t *testing.T) {
	t.Parallel()
	s := server.Open(t)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")
	require.ErrorIs(t, s.View(t.Context(), func(store.ReadTx) error { return nil }), store.ErrClosed)
	require.ErrorIs(t, s.Update(t.Context(), func(store.Tx) error { return nil }), store.ErrClosed)
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		opts etcd.Options
		want string
	}{
		{etcd.Options{}, "Options.Prefix is required"},
		{etcd.Options{Prefix: "flowgate"}, "must start with /"},
		{etcd.Options{Prefix: "/f", PageSize: -1}, "Options.PageSize"},
		{etcd.Options{Prefix: "/f", MaxTxnOps: -1}, "Options.MaxTxnOps"},
	} {
		_, err := etcd.New(server.Client(), tt.opts)
		require.ErrorContains(t, err, tt.want)
	}
	s, err := etcd.New(server.Client(), etcd.Options{Prefix: "/flowgate/prod"})
	require.NoError(t, err)
	require.Equal(t, "/flowgate/prod/", s.Prefix())
}

func TestUnreachableEtcdSaysWhatToCheck(t *testing.T) {
	t.Parallel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:1"}, DialTimeout: time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	s, err := etcd.New(cli, etcd.Options{Prefix: "/x", RequestTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	err = s.View(t.Context(), func(tx store.ReadTx) error { _, err := tx.Get("k"); return err })
	require.ErrorContains(t, err, "check that it is running and reachable")
	err = s.Update(t.Context(), func(tx store.Tx) error { _, err := tx.Put("k", nil); return err })
	require.ErrorContains(t, err, "check that it is running and reachable")
}

// TestUpdateThatWritesNothingConfirmsItsReads: an Update that only read
// (a refused compare-and-swap, say) reads serializably, so it checks at
// the end that what it read is still current, and runs again when not: its
// refusal must hold at a linearizable point.
func TestUpdateThatWritesNothingConfirmsItsReads(t *testing.T) {
	t.Parallel()
	s := server.Open(t)
	require.NoError(t, putN(t.Context(), s, "set/", 1, 1))
	var seen []int64
	fn, runs := interfere(t, s, func(tx store.Tx) error {
		_, err := tx.Put("set/000", []byte("2"))
		return err
	}, func(tx store.Tx) error {
		it, err := tx.Get("set/000")
		seen = append(seen, it.Revision)
		return err
	})
	require.NoError(t, s.Update(t.Context(), fn))
	require.Equal(t, 2, *runs)
	require.Equal(t, []int64{1, 2}, seen, "the second run saw the change")
}

// TestFailedCommitShowsInWriteHealth: a commit that cannot reach etcd
// fails with store.ErrWriteFailed, saying the change may or may not have
// been applied, and WriteHealth reports the store not writable.
func TestFailedCommitShowsInWriteHealth(t *testing.T) {
	t.Parallel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{server.Endpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	s, err := etcd.New(cli, etcd.Options{Prefix: server.Prefix()})
	require.NoError(t, err)
	require.NoError(t, putN(t.Context(), s, "k/", 1, 1))
	require.True(t, s.WriteHealth().Writable)

	err = s.Update(t.Context(), func(tx store.Tx) error {
		if _, err := tx.Put("k/000", []byte("x")); err != nil {
			return err
		}
		return cli.Close() // the connection goes before the commit
	})
	require.ErrorIs(t, err, store.ErrWriteFailed)
	require.ErrorContains(t, err, "may or may not have been applied")
	h := s.WriteHealth()
	require.False(t, h.Writable)
	require.Equal(t, int64(1), h.Failures)
}

// TestLargeChangesFitEtcdsChecks: a change that reads 60 keys, writes
// 100 new ones and scans one directory 200 times (as the engine's history
// pruning does) stays within etcd's 128 compares: overlapping scans are
// one range, and keys read only to number a Put are checked by directory
// once they do not fit one by one. Another writer creating one of those
// keys still makes it run again.
func TestLargeChangesFitEtcdsChecks(t *testing.T) {
	t.Parallel()
	s := server.Open(t)
	require.NoError(t, putN(t.Context(), s, "r/", 60, 1))
	require.NoError(t, putN(t.Context(), s, "s/", 10, 1))
	change := func(tx store.Tx) error {
		for i := range 60 {
			if _, err := tx.Get(fmt.Sprintf("r/%03d", i)); err != nil {
				return err
			}
		}
		for range 200 {
			if err := tx.Scan("s/", store.ScanOptions{Limit: 2}, func(store.Item) bool { return true }); err != nil {
				return err
			}
		}
		for i := range 100 {
			if _, err := tx.Put(fmt.Sprintf("w/%03d", i), []byte("x")); err != nil {
				return err
			}
		}
		return nil
	}
	fn, runs := interfere(t, s, func(tx store.Tx) error {
		_, err := tx.Put("w/050", []byte("theirs"))
		return err
	}, change)
	require.NoError(t, s.Update(t.Context(), fn))
	require.Equal(t, 2, *runs, "a key created meanwhile among those written made it run again")
	require.Equal(t, 100, count(t, s, "w/"))
	it := mustGet(t, s, "w/050")
	require.Equal(t, "x", string(it.Value))
	require.Equal(t, int64(2), it.Revision, "the second run numbered its Put after theirs")
}

// TestEmptyingADirectoryIsOneOperation: a change that scans a directory
// and deletes every key in it (pruning a flow's history) deletes the
// range in one operation, whatever its size; one that keeps a key there
// needs an operation per key and is refused over etcd's limit. A key
// created in the directory meanwhile makes it run again, and go too.
func TestEmptyingADirectoryIsOneOperation(t *testing.T) {
	t.Parallel()
	s := server.Open(t)
	for _, from := range []int{0, 100} {
		require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
			for i := from; i < from+100; i++ {
				if _, err := tx.Put(fmt.Sprintf("h/%03d", i), nil); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	require.NoError(t, putN(t.Context(), s, "h2/", 100, 1))
	require.NoError(t, putN(t.Context(), s, "keep/", 1, 1))
	deleteAll := func(prefix string, keep string) func(store.Tx) error {
		return func(tx store.Tx) error {
			var keys []string
			if err := tx.Scan(prefix, store.ScanOptions{}, func(it store.Item) bool {
				keys = append(keys, it.Key)
				return true
			}); err != nil {
				return err
			}
			for _, k := range keys {
				if k != keep {
					if err := tx.Delete(k); err != nil {
						return err
					}
				}
			}
			_, err := tx.Put("keep/000", []byte("after"))
			return err
		}
	}
	err := s.Update(t.Context(), deleteAll("h/", "h/050"))
	require.ErrorIs(t, err, store.ErrTxnTooLarge)
	require.Equal(t, 200, count(t, s, "h/"))

	fn, runs := interfere(t, s, func(tx store.Tx) error {
		_, err := tx.Put("h/new", []byte("theirs"))
		return err
	}, deleteAll("h/", ""))
	require.NoError(t, s.Update(t.Context(), fn))
	require.Equal(t, 2, *runs)
	require.Zero(t, count(t, s, "h/"))
	require.Equal(t, 100, count(t, s, "h2/"), "the neighbouring directory is untouched")
	require.Equal(t, 1, count(t, s, "keep/"))
}
