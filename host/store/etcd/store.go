package etcd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flowgate/flowgate/host/store"
)

// Store is a store.Store on etcd v3, confined to one key prefix. Make one
// with New (over a client you own) or Open (which dials and owns its
// client); the zero value is not usable. It is safe for concurrent use,
// from any number of processes: etcd orders their transactions.
type Store struct {
	cli    *clientv3.Client
	owned  bool // Close closes cli
	prefix string
	opts   Options
	health *store.Health
	cache  *cache // what Updates read and wrote, for their point reads

	mu     sync.Mutex
	closed bool
	active sync.WaitGroup // View and Update calls in progress
}

var (
	_ store.Store  = (*Store)(nil)
	_ store.Fencer = (*Store)(nil)
)

// New returns a Store over cli, under opts.Prefix. It does not contact
// etcd; the first call does. Close leaves cli open. Invalid opts fail with
// Validate's error.
func New(cli *clientv3.Client, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.WithDefaults()
	return &Store{cli: cli, prefix: opts.Prefix, opts: opts, health: store.NewHealth(), cache: newCache(opts.CacheSize)}, nil
}

// WriteHealth says whether the last commit reached etcd, as
// store.Bolt.WriteHealth does for its file.
func (s *Store) WriteHealth() store.WriteHealth { return s.health.Get() }

// Prefix returns the installation's key prefix, ending in "/".
func (s *Store) Prefix() string { return s.prefix }

// View implements store.Store: fn reads one snapshot, the etcd revision of
// its first read (a linearizable one). It returns fn's error, or
// store.ErrClosed after Close. A View that outlives etcd's compaction of
// its revision fails with an error saying so. Every read is bounded by
// ctx as well as by Options.RequestTimeout: once ctx ends, the read in
// flight stops and fails with an error wrapping ctx's.
func (s *Store) View(ctx context.Context, fn func(store.ReadTx) error) error {
	if err := s.acquire(); err != nil {
		return err
	}
	defer s.active.Done()
	if err := ctx.Err(); err != nil {
		return callerGone(err)
	}
	return fn(&reader{s: s, ctx: ctx})
}

// Update implements store.Store as an optimistic transaction. fn runs
// against a snapshot (see View) with its writes kept in memory; then one
// etcd Txn applies them all if nothing fn read has changed since (see
// readSet.compares), and otherwise fn runs again on a new snapshot. So a
// guarded write of a flow is one Txn: If(its ModRevision is still the one
// read).Then(Put the record, its indexes, its history). Its point reads
// (Get, and the revisions its Puts start from) come from a cache of what
// this Store last read and wrote (Options.CacheSize keys) when it holds
// them, so a guarded write of a flow this Store wrote before costs that
// one round trip; when another process changed a key since, the Txn
// fails, brings the keys it compared up to date in the same round trip,
// and fn runs again. When fn returns an error (a refusal), Update first
// checks that what fn read is still current, and runs fn again if not,
// so that the refusal holds at one point in etcd's order. A change over
// etcd's limits fails with an error wrapping store.ErrTxnTooLarge and
// writes nothing; a request that fails on the way (etcd unreachable, a
// timeout) fails with one wrapping store.ErrWriteFailed, and then the
// change may or may not have been applied. A panic in fn is returned as
// an error. It returns store.ErrClosed after Close. ctx bounds every
// round trip, and no new run of fn starts once it ended: the error then
// wraps ctx's (and store.ErrWriteFailed too when the commit was on its
// way).
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.updateFenced(ctx, nil, fn)
}

// UpdateFenced implements store.Fencer: it is Update with one more
// compare in its Txn, that f.Key's CreateRevision is f.Revision. When the
// Txn fails and the fence is what no longer holds, it returns an error
// wrapping store.ErrFenced instead of running fn again.
func (s *Store) UpdateFenced(ctx context.Context, f store.Fence, fn func(store.Tx) error) error {
	return s.updateFenced(ctx, &f, fn)
}

// updateFenced is Update under fence f, or under none when f is nil.
func (s *Store) updateFenced(ctx context.Context, f *store.Fence, fn func(store.Tx) error) error {
	if err := s.acquire(); err != nil {
		return err
	}
	defer s.active.Done()
	start := time.Now()
	err := s.update(ctx, f, fn)
	if s.opts.OnCommit != nil {
		s.opts.OnCommit(time.Since(start))
	}
	return err
}

// update runs fn until its transaction commits, fails, or has met
// conflicts MaxAttempts times; under fence f, if not nil.
func (s *Store) update(ctx context.Context, f *store.Fence, fn func(store.Tx) error) error {
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return callerGone(err)
		}
		// A third run reads etcd only, in case the cache is stale where
		// a failed Txn could not refresh it (see readSet.compares).
		r := &reader{s: s, ctx: ctx, seen: newReadSet(), cached: attempt <= 2}
		buf := store.NewBuffer(r)
		err := s.apply(fn, buf)
		writes := buf.Writes()
		var done bool
		switch {
		case err != nil && (r.failed || r.seen.empty()):
			return err
		case err != nil:
			// fn concluded from what it read: return that if it holds.
			var cerr error
			if done, cerr = s.confirm(ctx, r); cerr != nil || done {
				return cmp.Or(cerr, err)
			}
			err = nil
		case len(writes) == 0:
			done, err = s.confirm(ctx, r)
		default:
			// A commit the caller gave up on says nothing of etcd's health.
			if done, err = s.commit(ctx, r, writes, f); (err == nil || errors.Is(err, store.ErrWriteFailed)) && ctx.Err() == nil {
				s.health.Record(err)
			}
		}
		if err == nil && !done && f != nil {
			err = s.checkFence(ctx, *f)
		}
		if err != nil || done {
			return err
		}
		if attempt == s.opts.MaxAttempts {
			return fmt.Errorf("%w: etcd store: what this change read kept changing under it (%d attempts); retry it", store.ErrWriteFailed, attempt)
		}
		s.opts.Logger.Debug("transaction conflicted, running it again", "attempt", attempt)
		if attempt > 2 {
			// Contending writers take turns rather than collide again.
			select {
			case <-time.After(rand.N(time.Duration(min(attempt, 50)) * time.Millisecond)):
			case <-ctx.Done():
			}
		}
	}
}

// apply runs fn on tx, turning a panic into an error.
func (s *Store) apply(fn func(store.Tx) error, tx store.Tx) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.opts.Logger.Error("update function panicked", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("store: update function panicked: %v", r)
		}
	}()
	return fn(tx)
}

// Close waits for the calls in progress and closes the client if the
// store dialled it. Later calls return store.ErrClosed; Close is
// idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.active.Wait()
	if s.owned {
		if err := s.cli.Close(); err != nil {
			return fmt.Errorf("etcd store: close the client: %w", err)
		}
	}
	return nil
}

// acquire registers a call in progress, or returns store.ErrClosed.
func (s *Store) acquire() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	s.active.Add(1)
	return nil
}

// DeleteAll deletes every key of the store's prefix in one request: for a
// scratch prefix (flowgate bench's) once it is done with.
func (s *Store) DeleteAll(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	if _, err := s.cli.Delete(ctx, s.prefix, clientv3.WithPrefix()); err != nil {
		return fmt.Errorf("etcd store: delete the keys under %s: %w", s.prefix, unavailable(s, err))
	}
	return nil
}
