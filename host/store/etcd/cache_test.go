package etcd_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// counted opens a Store under prefix over a client of its own that counts
// the requests it sends to etcd.
func counted(t *testing.T, prefix string) (*etcd.Store, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	count := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		n.Add(1)
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	s, _ := openOwn(t, prefix, grpc.WithChainUnaryInterceptor(count))
	return s, &n
}

// staleCache returns two Stores on one prefix: mine wrote key at version
// 1 and caches that, theirs wrote it at version 2 since. requests counts
// mine's requests from then on.
func staleCache(t *testing.T, key string) (mine, theirs *etcd.Store, requests *atomic.Int64) {
	t.Helper()
	prefix := server.Prefix()
	mine, requests = counted(t, prefix)
	theirs, _ = openOwn(t, prefix)
	require.NoError(t, mine.Update(t.Context(), guard(key, 0, "1")))
	require.NoError(t, theirs.Update(t.Context(), guard(key, 1, "2")))
	requests.Store(0)
	return mine, theirs, requests
}

// requireAt checks that key holds value at revision rev.
func requireAt(t *testing.T, s store.Store, key, value string, rev int64) {
	t.Helper()
	it := mustGet(t, s, key)
	require.Equal(t, value, string(it.Value))
	require.Equal(t, rev, it.Revision)
}

// errStale is the refusal of guard.
var errStale = errors.New("revision conflict")

// guard is a guarded write of key: it refuses unless key is at revision
// expected, and otherwise writes value.
func guard(key string, expected int64, value string) func(store.Tx) error {
	return func(tx store.Tx) error {
		it, err := tx.Get(key)
		if err != nil && !errors.Is(err, store.ErrKeyNotFound) {
			return err
		}
		if it.Revision != expected {
			return errStale
		}
		_, err = tx.Put(key, []byte(value))
		return err
	}
}

// TestGuardedWriteOfAKeyItWroteIsOneRoundTrip: the store's cache answers
// the read of a key it wrote itself, so the guarded write that follows
// sends one Txn and nothing else.
func TestGuardedWriteOfAKeyItWroteIsOneRoundTrip(t *testing.T) {
	t.Parallel()
	s, requests := counted(t, server.Prefix())
	require.NoError(t, s.Update(t.Context(), guard("flow", 0, "1")))
	requests.Store(0)
	require.NoError(t, s.Update(t.Context(), guard("flow", 1, "2")))
	require.NoError(t, s.Update(t.Context(), guard("flow", 2, "3")))
	require.Equal(t, int64(2), requests.Load(), "one request per guarded write")
	requireAt(t, s, "flow", "3", 3)
}

// TestRefusalOnAStaleCacheIsConfirmed: a store whose cache holds an old
// version of a key another store has since written does not refuse a
// guarded write that expects the new one: it checks its reads, finds them
// stale, and runs the write again on what etcd holds. A refusal that still
// holds is returned as it was.
func TestRefusalOnAStaleCacheIsConfirmed(t *testing.T) {
	t.Parallel()
	mine, theirs, _ := staleCache(t, "flow")
	require.NoError(t, mine.Update(t.Context(), guard("flow", 2, "3")), "the refusal read a stale cache")
	requireAt(t, theirs, "flow", "3", 3)
	require.ErrorIs(t, mine.Update(t.Context(), guard("flow", 2, "4")), errStale, "version 3 is current")
}

// TestStaleCacheRefreshesInTheFailedTxn: a write through a stale cache
// fails its compare, and that Txn brings the key up to date, so the
// write's second run costs its own Txn and no read.
func TestStaleCacheRefreshesInTheFailedTxn(t *testing.T) {
	t.Parallel()
	mine, theirs, requests := staleCache(t, "k")
	runs := 0
	require.NoError(t, mine.Update(t.Context(), func(tx store.Tx) error {
		runs++
		it, err := tx.Get("k")
		if err != nil {
			return err
		}
		_, err = tx.Put("k", append(it.Value, '+'))
		return err
	}))
	require.Equal(t, 2, runs)
	require.Equal(t, int64(2), requests.Load(), "two Txns, no Get")
	requireAt(t, theirs, "k", "2+", 3) // the second run read their write
}

// TestScanAfterAStaleCachedGetRunsAgain: a change that got a key from a
// stale cache and then scanned it as it now is saw two versions of it; it
// does not commit what it concluded from both, but runs again.
func TestScanAfterAStaleCachedGetRunsAgain(t *testing.T) {
	t.Parallel()
	mine, theirs, _ := staleCache(t, "d/k")
	var got, scanned []string
	require.NoError(t, mine.Update(t.Context(), func(tx store.Tx) error {
		it, err := tx.Get("d/k")
		if err != nil {
			return err
		}
		got = append(got, string(it.Value))
		err = tx.Scan("d/", store.ScanOptions{}, func(it store.Item) bool {
			scanned = append(scanned, string(it.Value))
			return true
		})
		if err != nil {
			return err
		}
		_, err = tx.Put("d/sum", []byte(got[len(got)-1]+scanned[len(scanned)-1]))
		return err
	}))
	require.Equal(t, []string{"1", "2"}, got, "the first run's Get was the cache's")
	require.Equal(t, "22", string(mustGet(t, theirs, "d/sum").Value))
}

// TestKeyAScanPassedOverIsNotReadAgain: appending after the last key of a
// directory (a reverse scan of one key, then a Put of the next) reads the
// new key's absence from the scan: one Range and one Txn.
func TestKeyAScanPassedOverIsNotReadAgain(t *testing.T) {
	t.Parallel()
	s, requests := counted(t, server.Prefix())
	require.NoError(t, putN(t.Context(), s, "log/", 3, 1))
	requests.Store(0)
	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		var last string
		if err := tx.Scan("log/", store.ScanOptions{Reverse: true, Limit: 1}, func(it store.Item) bool {
			last = it.Key
			return false
		}); err != nil {
			return err
		}
		require.Equal(t, "log/002", last)
		_, err := tx.Put("log/003", []byte("x"))
		return err
	}))
	require.Equal(t, int64(2), requests.Load())
	requireAt(t, s, "log/003", "x", 1)
}
