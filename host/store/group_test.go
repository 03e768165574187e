package store_test

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/stretchr/testify/require"
	berrors "go.etcd.io/bbolt/errors"
)

// holdWriter starts an Update that writes a key, then blocks until release
// is closed, so that later Updates queue behind it. It returns once the
// function is running; done delivers the Update's result.
func holdWriter(t *testing.T, s store.Store) (release chan struct{}, done chan error) {
	t.Helper()
	release, done = make(chan struct{}), make(chan error, 1)
	running := make(chan struct{})
	var once sync.Once
	go func() {
		done <- s.Update(t.Context(), func(tx store.Tx) error {
			once.Do(func() { close(running) })
			<-release
			_, err := tx.Put("holder", []byte("x"))
			return err
		})
	}()
	<-running
	return release, done
}

// queue starts fns as Updates one at a time, each only once the previous
// one is queued behind the held writer, so that they queue in order. It
// returns their results, in the same order, once all have returned.
func queue(t *testing.T, s *store.Bolt, fns ...func(store.Tx) error) func() []error {
	t.Helper()
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() { errs[i] = s.Update(t.Context(), fn) })
		require.Eventually(t, func() bool { return store.Queued(s) == i+1 }, 5*time.Second, time.Millisecond)
	}
	return func() []error {
		wg.Wait()
		return errs
	}
}

// putFn returns an Update function that writes key, counting its runs.
func putFn(key string, runs *atomic.Int32, fail error) func(store.Tx) error {
	return func(tx store.Tx) error {
		runs.Add(1)
		if _, err := tx.Put(key, []byte(key)); err != nil {
			return err
		}
		return fail
	}
}

func TestGroupCommitCoalescesQueuedWriters(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	release, held := holdWriter(t, s)
	before := s.Writer()

	var runs atomic.Int32
	fns := make([]func(store.Tx) error, 20)
	for i := range fns {
		fns[i] = putFn(fmt.Sprintf("k/%02d", i), &runs, nil)
	}
	wait := queue(t, s, fns...)
	close(release)
	require.NoError(t, <-held)
	for _, err := range wait() {
		require.NoError(t, err)
	}

	after := s.Writer()
	require.Equal(t, int64(2), after.Commits-before.Commits, "the held writer's commit, then one for all that queued")
	require.Equal(t, int64(21), after.Updates-before.Updates)
	require.Equal(t, int32(20), runs.Load(), "each function ran once")
}

func TestGroupCommitRespectsMaxBatch(t *testing.T) {
	t.Parallel()
	s, err := store.Open(t.TempDir()+"/flowgate.db", store.Options{MaxBatch: 4})
	require.NoError(t, err)
	defer s.Close()
	release, held := holdWriter(t, s)
	commits0 := s.Writer().Commits

	var runs atomic.Int32
	fns := make([]func(store.Tx) error, 10)
	for i := range fns {
		fns[i] = putFn(fmt.Sprintf("k/%02d", i), &runs, nil)
	}
	wait := queue(t, s, fns...)
	close(release)
	require.NoError(t, <-held)
	for _, err := range wait() {
		require.NoError(t, err)
	}
	commits := s.Writer().Commits
	require.Equal(t, int64(1+3), commits-commits0, "10 queued writers in batches of at most 4")
}

func TestGroupCommitFailedFunctionRunsSolo(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	release, held := holdWriter(t, s)
	commits0 := s.Writer().Commits

	errB := errors.New("b refused")
	var runsA, runsB, runsC atomic.Int32
	wait := queue(t, s, putFn("a", &runsA, nil), putFn("b", &runsB, errB), putFn("c", &runsC, nil))
	close(release)
	require.NoError(t, <-held)
	errs := wait()

	require.NoError(t, errs[0])
	require.ErrorIs(t, errs[1], errB)
	require.NoError(t, errs[2])
	require.Equal(t, int32(2), runsA.Load(), "a ran, was rolled back with b, and ran again without it")
	require.Equal(t, int32(2), runsB.Load(), "b failed in the batch, then again alone")
	require.Equal(t, int32(1), runsC.Load(), "c never ran with b")
	commits := s.Writer().Commits
	require.Equal(t, int64(2), commits-commits0, "the held writer, then a and c; b's solo run committed nothing")

	for key, want := range map[string]error{"a": nil, "b": store.ErrKeyNotFound, "c": nil} {
		err := s.View(t.Context(), func(tx store.ReadTx) error {
			_, err := tx.Get(key)
			return err
		})
		require.ErrorIs(t, err, want, key)
	}
}

func TestGroupCommitFirstFailureIsFinal(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	errA := errors.New("a refused")
	var runsA atomic.Int32
	require.ErrorIs(t, s.Update(t.Context(), putFn("a", &runsA, errA)), errA)
	require.Equal(t, int32(1), runsA.Load(), "a lone failing function is not run again")
}

func TestGroupCommitPanicIsCallersError(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	err := s.Update(t.Context(), func(store.Tx) error { panic("lone panic") })
	require.ErrorContains(t, err, "panicked: lone panic")

	release, held := holdWriter(t, s)
	var runs atomic.Int32
	boom := errors.New("boom")
	wait := queue(t, s,
		putFn("a", &runs, nil),
		func(tx store.Tx) error {
			if _, err := tx.Put("p", nil); err != nil {
				return err
			}
			panic(boom)
		},
		putFn("c", &runs, nil),
	)
	close(release)
	require.NoError(t, <-held)
	errs := wait()
	require.NoError(t, errs[0])
	require.ErrorIs(t, errs[1], boom, "a panic with an error value wraps it")
	require.NoError(t, errs[2])
	err = s.View(t.Context(), func(tx store.ReadTx) error {
		_, err := tx.Get("p")
		return err
	})
	require.ErrorIs(t, err, store.ErrKeyNotFound)
}

func TestGroupCommitErrorReachesWholeBatch(t *testing.T) {
	t.Parallel()
	// The file may not grow past 6 MiB: one 1 MiB value fits, a batch of
	// eight fails at commit, the way it would on a full disk.
	s, err := store.OpenMaxSize(t.TempDir()+"/flowgate.db", store.Options{}, 6<<20)
	require.NoError(t, err)
	defer s.Close()

	release, held := holdWriter(t, s)
	fns := make([]func(store.Tx) error, 8)
	for i := range fns {
		fns[i] = func(tx store.Tx) error {
			_, err := tx.Put(fmt.Sprintf("big/%d", i), make([]byte, 1<<20))
			return err
		}
	}
	wait := queue(t, s, fns...)
	close(release)
	require.NoError(t, <-held)
	for i, err := range wait() {
		require.ErrorIs(t, err, berrors.ErrMaxSizeReached, "writer %d", i)
		require.ErrorContains(t, err, "commit failed")
	}

	require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("big/alone", make([]byte, 1<<20))
		return err
	}), "the store takes writes after a failed commit")
	require.NoError(t, s.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("big/", store.ScanOptions{}, func(it store.Item) bool {
			if it.Key != "big/alone" {
				t.Errorf("%s was committed", it.Key)
			}
			return true
		})
	}))
	require.NoError(t, s.Check())
}

func TestGroupCommitSkipsCleanTransactions(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	commits0 := s.Writer().Commits
	for range 10 {
		require.NoError(t, s.Update(t.Context(), func(tx store.Tx) error {
			_, err := tx.Get("missing")
			if !errors.Is(err, store.ErrKeyNotFound) {
				return err
			}
			return tx.Delete("missing")
		}))
	}
	commits := s.Writer().Commits
	require.Equal(t, commits0, commits, "Updates that change nothing commit nothing")
}

func TestGroupCommitSurvivesGoexit(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	release, held := holdWriter(t, s)
	var runs atomic.Int32
	wait := queue(t, s,
		func(store.Tx) error { runtime.Goexit(); return nil }, // leads the next commit, then dies in it
		putFn("b", &runs, nil),
	)
	close(release)
	require.NoError(t, <-held)
	errs := wait()
	require.ErrorContains(t, errs[1], "runtime.Goexit")
	require.NoError(t, s.Update(t.Context(), putFn("c", &runs, nil)), "later writers are not stuck")
}

// Writer counts the commits and the calls they carried, and splits the
// writer's time between the callers' functions and bbolt's commit.
func TestWriterStatsAddUpTheWriterTime(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	before := s.Writer()
	release, done := holdWriter(t, s)
	heldSince := time.Now() // the held function runs from before now until release
	wait := queue(t, s,
		func(tx store.Tx) error { _, err := tx.Put("a", []byte("1")); return err },
		func(tx store.Tx) error { _, err := tx.Put("b", []byte("2")); return err })
	held := time.Since(heldSince)
	close(release)
	errs := append(wait(), <-done)
	require.Equal(t, []error{nil, nil, nil}, errs)

	w := s.Writer()
	require.Equal(t, int64(3), w.Updates-before.Updates, "every Update call is counted")
	require.Equal(t, int64(2), w.Commits-before.Commits, "the two queued calls share one commit")
	applying, busy := w.Applying-before.Applying, w.Busy-before.Busy
	require.GreaterOrEqual(t, applying, held, "the held function's time is the writer's")
	require.Greater(t, busy, applying, "the commit's writes and fsyncs are counted beside the functions")
}
