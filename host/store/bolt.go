package store

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.etcd.io/bbolt"
)

// Bolt is the embedded Store, one bbolt file owned by one process. Open it
// with Open; the zero value is not usable. It is safe for concurrent use.
type Bolt struct {
	path   string
	db     *bbolt.DB
	group  *group
	logger hclog.Logger
	commit func(time.Duration) // Options.OnCommit, or nil
	seal   *sealer

	// damage is the first page damage a guarded call met (see guard);
	// from then on Update refuses to write, so that bbolt does not spread
	// the damage over sound pages.
	damage atomic.Pointer[error]

	mu      sync.Mutex
	closed  bool
	active  int        // View, Update and WriteTo calls in progress
	drained *sync.Cond // signalled when active drops to zero after Close
	done    chan struct{}
}

var _ Store = (*Bolt)(nil)

// Check runs bbolt's page-level consistency check over the whole file and
// returns the first problem it finds, or nil. It reads every page, so it
// costs time in proportion to the file size, and writers wait while it
// runs (see PageProblems); run it on demand (flowgate check) or after a
// crash, not on every open. It returns ErrClosed after Close.
func (b *Bolt) Check() error {
	problems, err := b.PageProblems()
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s: %s", ErrCorrupt, b.path, problems[0])
	}
	return nil
}

// Path returns the absolute path of the store file.
func (b *Bolt) Path() string { return b.path }

// View implements Store. It returns fn's error, or ErrClosed after Close.
// ctx is checked before the transaction begins (its error is returned if
// it ended); a transaction on the local file is not interrupted.
func (b *Bolt) View(ctx context.Context, fn func(ReadTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.acquire(); err != nil {
		return err
	}
	defer b.release()
	return b.view(func(tx *bbolt.Tx) error {
		return fn(readTx{bucket: tx.Bucket([]byte(bucketName))})
	})
}

// view runs fn in a read transaction, guarded (see guard).
func (b *Bolt) view(fn func(*bbolt.Tx) error) error {
	return b.noteDamage(guard(b.path, func() error { return b.db.View(fn) }))
}

// noteDamage records err if it is page damage, and returns it.
func (b *Bolt) noteDamage(err error) error {
	if pageDamage(err) && b.damage.CompareAndSwap(nil, &err) {
		b.seal.spoil()
	}
	return err
}

// Update implements Store with group commit (see the package
// documentation). A panic in fn is recovered and returned as an error to
// this caller only. Update returns fn's error, a commit error (shared by
// every caller in the failed transaction; the store stays usable), or
// ErrClosed after Close. Once any call has met a damaged page (an error
// wrapping ErrCorrupt that names it), Update runs nothing and returns that
// error: writing to a damaged file can spread the damage. Options.OnCommit
// hears how long each call took. ctx is checked as View checks it: once
// fn joined a group commit, the commit is not interrupted.
func (b *Bolt) Update(ctx context.Context, fn func(Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.acquire(); err != nil {
		return err
	}
	defer b.release()
	if err := b.damage.Load(); err != nil {
		return fmt.Errorf("store %s takes no more writes, it was found damaged: %w", b.path, *err)
	}
	start := time.Now()
	err := b.noteDamage(b.group.update(func(tx *bbolt.Tx) (bool, error) {
		return b.apply(tx, fn)
	}))
	if b.commit != nil {
		b.commit(time.Since(start))
	}
	return err
}

// apply runs one caller's fn in tx, reporting whether it changed anything
// and turning a panic into that caller's error: page damage (see guard)
// when bbolt raised it reading a damaged page.
func (b *Bolt) apply(tx *bbolt.Tx, fn func(Tx) error) (wrote bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			if fromDamage(r) {
				err = b.noteDamage(damaged(b.path, r))
				return
			}
			b.logger.Error("update function panicked", "panic", r, "stack", string(debug.Stack()))
			if e, ok := r.(error); ok {
				err = fmt.Errorf("store: update function panicked: %w", e)
			} else {
				err = fmt.Errorf("store: update function panicked: %v", r)
			}
		}
	}()
	err = fn(writeTx{readTx: readTx{bucket: tx.Bucket([]byte(bucketName)), writable: true}, wrote: &wrote})
	return wrote, err
}

// WriteTo writes a consistent copy of the whole store file to w from a read
// transaction, while writers carry on: a hot backup. The copy opens with
// Open like the original. It returns the bytes written and the first error
// from w, or ErrClosed after Close.
func (b *Bolt) WriteTo(w io.Writer) (int64, error) {
	if err := b.acquire(); err != nil {
		return 0, err
	}
	defer b.release()
	var n int64
	err := b.view(func(tx *bbolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}

// Close waits for calls in progress, removes the holder file and releases
// the store file. Later calls return ErrClosed; Close itself is idempotent
// and returns nil after the first call has finished.
func (b *Bolt) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		<-b.done
		return nil
	}
	b.closed = true
	for b.active > 0 {
		b.drained.Wait()
	}
	b.mu.Unlock()
	defer close(b.done)

	commits, calls := b.group.stats()
	b.logger.Debug("closing store", "path", b.path, "commits", commits, "updates", calls)
	// Remove the record first, while the lock is still held, so it never
	// describes a process that no longer holds the store.
	removeHolder(b.path, b.logger)
	b.seal.close() // while the lock is held: no other process's write is sealed
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("store %s: close: %w", b.path, err)
	}
	return nil
}

// acquire registers a call in progress, or returns ErrClosed.
func (b *Bolt) acquire() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	b.active++
	return nil
}

// release ends a call registered by acquire.
func (b *Bolt) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.active--; b.active == 0 && b.closed {
		b.drained.Broadcast()
	}
}
