package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/flowgate/flowgate/host/store"
	"github.com/stretchr/testify/require"
)

// casResult is what one guarded write saw. Update functions may run more
// than once, so a function resets it at its start.
type casResult struct {
	won      bool
	observed int64 // the revision found inside the transaction
	newRev   int64 // the revision written, when won
	err      error // a failure inside the function (not a refusal)
}

// compareAndSwap writes next to key if its revision is still expected
// (0: absent). A refusal is reported through the result, not as the
// function's error, so that other writers in the same group commit are not
// rolled back with it.
func compareAndSwap(ctx context.Context, s store.Store, key string, expected int64, next func(old []byte) []byte) (casResult, error) {
	var r casResult
	err := s.Update(ctx, func(tx store.Tx) error {
		r = casResult{}
		var old []byte
		item, err := tx.Get(key)
		switch {
		case errors.Is(err, store.ErrKeyNotFound):
		case err != nil:
			r.err = err
			return nil
		default:
			r.observed, old = item.Revision, item.Value
		}
		if r.observed != expected {
			return nil
		}
		rev, err := tx.Put(key, next(old))
		if err != nil {
			return err
		}
		r.won, r.newRev = true, rev
		return nil
	})
	if err == nil {
		err = r.err
	}
	return r, err
}

// testCompareAndSwap has 16 goroutines increment a counter under one key by
// read, then compare-and-swap on the revision read. Every success must show
// in the final revision and value, and every refusal must have seen a
// newer revision than the one it expected.
func testCompareAndSwap(t *testing.T, s store.Store) {
	const (
		writers  = 16
		attempts = 25
		key      = "cas/counter"
	)
	increment := func(old []byte) []byte {
		n := 0
		if old != nil {
			n, _ = strconv.Atoi(string(old))
		}
		return []byte(strconv.Itoa(n + 1))
	}

	type loss struct{ expected, observed int64 }
	var (
		mu      sync.Mutex
		wins    []int64 // revisions written by successful swaps
		losses  []loss
		wg      sync.WaitGroup
		errs    = make(chan error, writers)
		barrier = make(chan struct{})
	)
	for range writers {
		wg.Go(func() {
			<-barrier
			for range attempts {
				var expected int64
				err := s.View(t.Context(), func(tx store.ReadTx) error {
					item, err := tx.Get(key)
					if errors.Is(err, store.ErrKeyNotFound) {
						expected = 0
						return nil
					}
					expected = item.Revision
					return err
				})
				if err != nil {
					errs <- err
					return
				}
				r, err := compareAndSwap(t.Context(), s, key, expected, increment)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				if r.won {
					wins = append(wins, r.newRev)
				} else {
					losses = append(losses, loss{expected, r.observed})
				}
				mu.Unlock()
			}
		})
	}
	close(barrier)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	final := mustGet(t, s, key)
	require.NotEmpty(t, wins)
	require.Equal(t, int64(len(wins)), final.Revision, "final revision == successful swaps")
	require.Equal(t, strconv.Itoa(len(wins)), string(final.Value), "no increment lost")
	slices.Sort(wins)
	for i, rev := range wins {
		require.Equal(t, int64(i+1), rev, "each successful swap wrote the next revision, once")
	}
	require.Equal(t, writers*attempts, len(wins)+len(losses))
	for _, l := range losses {
		require.Greater(t, l.observed, l.expected, "a refused swap saw a newer revision than it expected")
		require.LessOrEqual(t, l.observed, final.Revision)
	}
	t.Logf("%d swaps won, %d refused", len(wins), len(losses))
}

// testGroupCommitDisjointWriters starts 64 writers on distinct keys at once;
// all must succeed and be readable afterwards.
func testGroupCommitDisjointWriters(t *testing.T, s store.Store) {
	const writers = 64
	var wg sync.WaitGroup
	errs := make([]error, writers)
	barrier := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			<-barrier
			for round := range 3 {
				errs[w] = s.Update(t.Context(), func(tx store.Tx) error {
					_, err := tx.Put(keyN("gc/", w), fmt.Appendf(nil, "writer %d round %d", w, round))
					return err
				})
				if errs[w] != nil {
					return
				}
			}
		})
	}
	close(barrier)
	wg.Wait()
	for w, err := range errs {
		require.NoError(t, err, "writer %d", w)
	}
	for w := range writers {
		item := mustGet(t, s, keyN("gc/", w))
		require.Equal(t, fmt.Sprintf("writer %d round 2", w), string(item.Value))
		require.Equal(t, int64(3), item.Revision)
	}
	require.Len(t, scanKeys(t, s, "gc/", store.ScanOptions{}), writers)
}

// testFailingWriterIsolated runs concurrent writers of which one fails
// after writing: the others must commit, the failing one must get its own
// error and leave nothing behind.
func testFailingWriterIsolated(t *testing.T, s store.Store) {
	const (
		writers = 16
		failing = 5
	)
	errFn := errors.New("writer refused")
	for round := range 5 {
		var wg sync.WaitGroup
		errs := make([]error, writers)
		barrier := make(chan struct{})
		for w := range writers {
			wg.Go(func() {
				<-barrier
				errs[w] = s.Update(t.Context(), func(tx store.Tx) error {
					if _, err := tx.Put(keyN(fmt.Sprintf("iso/%d/", round), w), []byte(valueN(w))); err != nil {
						return err
					}
					if _, err := tx.Put("iso/shared", []byte(valueN(w))); err != nil {
						return err
					}
					if w == failing {
						return errFn
					}
					return nil
				})
			})
		}
		close(barrier)
		wg.Wait()

		for w, err := range errs {
			key := keyN(fmt.Sprintf("iso/%d/", round), w)
			if w == failing {
				require.ErrorIs(t, err, errFn)
				_, err := get(t, s, key)
				require.ErrorIs(t, err, store.ErrKeyNotFound, "the failed writer's put was rolled back")
				continue
			}
			require.NoError(t, err, "writer %d", w)
			require.Equal(t, valueN(w), string(mustGet(t, s, key).Value))
		}
		shared := mustGet(t, s, "iso/shared")
		require.NotEqual(t, valueN(failing), string(shared.Value))
		require.Equal(t, int64((round+1)*(writers-1)), shared.Revision, "every successful writer bumped the shared key once")
	}
}
