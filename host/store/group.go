package store

import (
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"
)

// group commits concurrent writes together: one bbolt transaction, one pair
// of fsyncs, for every write that queued while the previous commit was on
// its way to disk.
//
// The first writer to find no commit in flight leads: it takes the queue
// (up to max calls) and commits it at once; there is no timer, so a lone
// writer never waits. Writers that arrive meanwhile queue up. When a commit
// is done, leadership passes to the first queued writer, so every goroutine
// leads at most one commit and returns.
//
// A function that fails is taken out of the transaction and the rest run
// again without it (see commit), so each caller gets its own outcome.
//
// bbolt's DB.Batch does the same job with a timer, which makes a lone
// writer wait MaxBatchDelay and every batch smaller than MaxBatchSize wait
// the full delay.
type group struct {
	db     *bbolt.DB
	path   string // for error messages
	max    int
	health *Health
	seal   *sealer // told of every commit

	mu      sync.Mutex
	pending []*call
	leading bool  // a goroutine is committing, or has been told to
	commits int64 // transactions committed
	calls   int64 // Update calls those transactions carried

	// busy and applying add up the wall time of every write transaction,
	// from its start until it is durable, and the part of it spent in
	// the callers' functions: the rest is bbolt's commit, its page
	// writes and its two fsyncs (see Bolt.Writer).
	busy, applying atomic.Int64
}

// writeFunc runs one caller's function in tx. It reports whether it changed
// anything, and turns a panic into an error.
type writeFunc func(tx *bbolt.Tx) (wrote bool, err error)

// call is one queued Update.
type call struct {
	fn   writeFunc
	done chan result // buffered: senders never block
}

// result is what a queued caller is told: its outcome, or that it now
// leads, or that it must run alone because it failed inside a batch.
type result struct {
	err  error
	lead bool
	solo bool
}

// errClean rolls back a transaction in which no function changed anything:
// there is nothing to make durable, so it skips the commit and its fsyncs.
var errClean = errors.New("store: nothing to commit")

func newGroup(db *bbolt.DB, path string, max int, seal *sealer) *group {
	return &group{db: db, path: path, max: max, health: NewHealth(), seal: seal}
}

// update runs fn in a transaction, possibly shared with other callers, and
// returns once the transaction is durable or fn has failed.
func (g *group) update(fn writeFunc) error {
	c := &call{fn: fn, done: make(chan result, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, c)
	r := result{lead: !g.leading}
	g.leading = true
	g.mu.Unlock()
	if !r.lead {
		r = <-c.done
	}
	if r.lead {
		g.lead()
		r = <-c.done
	}
	if r.solo {
		return g.solo(fn)
	}
	return r.err
}

// lead commits the head of the queue, which includes the leader's own call,
// delivers the outcome and passes leadership on.
func (g *group) lead() {
	batch := g.take()
	finished := false
	defer func() {
		// A function that called runtime.Goexit (t.FailNow, say) unwinds
		// the leader mid-commit. Fail the rest of the batch and pass
		// leadership on rather than leave every later writer waiting.
		// Calls that already have their result keep it: the send is
		// skipped when their buffer is full.
		if finished {
			return
		}
		for _, c := range batch {
			select {
			case c.done <- result{err: errors.New("store: an Update function in the same batch called runtime.Goexit")}:
			default:
			}
		}
		g.handOff(false, 0)
	}()

	rest, committed, err := g.commit(batch)
	finished = true
	for _, c := range rest {
		c.done <- result{err: err}
	}
	g.handOff(committed, len(rest))
}

// maxYields bounds how many times a leader lets other goroutines run before
// it takes the queue.
const maxYields = 4

// take removes up to max calls from the head of the queue. First it yields
// the processor while the queue is still growing: writers that the previous
// commit has just released are runnable and about to queue again, and this
// lets them into this commit instead of the next (it raises the calls per
// commit from about half the writers to most of them). A lone writer pays
// one yield; there is no timer.
func (g *group) take() []*call {
	g.mu.Lock()
	defer g.mu.Unlock()
	for range maxYields {
		n := len(g.pending)
		if n >= g.max {
			break
		}
		g.mu.Unlock()
		runtime.Gosched()
		g.mu.Lock()
		if len(g.pending) == n {
			break
		}
	}
	n := min(len(g.pending), g.max)
	batch := slices.Clone(g.pending[:n])
	g.pending = slices.Delete(g.pending, 0, n)
	return batch
}

// commit runs batch in one transaction. A function that fails is taken out
// and the rest is run again, so that one caller's error never rolls back
// the others. The failed caller gets its error at once if it ran first (it
// saw only committed data, so the error is its own), otherwise it is told
// to run alone. commit returns the calls that remain, whether a transaction
// was committed for them (none is when nothing changed), and the commit
// error they all share.
func (g *group) commit(batch []*call) (rest []*call, committed bool, err error) {
	batch = slices.Clone(batch)
	for len(batch) > 0 {
		failed := -1
		var failErr error
		err := g.write(func(tx *bbolt.Tx) error {
			dirty := false
			for i, c := range batch {
				wrote, err := c.fn(tx)
				if err != nil {
					failed, failErr = i, err
					return err
				}
				dirty = dirty || wrote
			}
			if !dirty {
				return errClean
			}
			return nil
		})
		switch {
		case failed < 0 && errors.Is(err, errClean):
			return batch, false, nil
		case failed < 0 && err != nil:
			g.health.Record(err)
			return batch, false, &writeError{path: g.path, cause: err}
		case failed < 0:
			g.health.Record(nil)
			return batch, true, nil
		}
		c := batch[failed]
		batch = slices.Delete(batch, failed, failed+1)
		if failed == 0 {
			c.done <- result{err: failErr}
		} else {
			c.done <- result{solo: true}
		}
	}
	return nil, false, nil
}

// handOff records a finished commit carrying n calls and wakes the first
// queued caller to lead the next one, or marks that no commit is in flight.
func (g *group) handOff(committed bool, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if committed {
		g.commits++
		g.calls += int64(n)
	}
	if len(g.pending) == 0 {
		g.leading = false
		return
	}
	g.pending[0].done <- result{lead: true}
}

// solo runs fn in a transaction of its own, after it failed inside a batch
// where other functions ran before it.
func (g *group) solo(fn writeFunc) error {
	var fnErr error
	err := g.write(func(tx *bbolt.Tx) error {
		wrote, err := fn(tx)
		switch {
		case err != nil:
			fnErr = err
			return err
		case !wrote:
			return errClean
		}
		return nil
	})
	switch {
	case fnErr != nil:
		return fnErr
	case errors.Is(err, errClean):
		return nil
	case err != nil:
		g.health.Record(err)
		return &writeError{path: g.path, cause: err}
	}
	g.health.Record(nil)
	g.mu.Lock()
	g.commits++
	g.calls++
	g.mu.Unlock()
	return nil
}

// write runs fn in a write transaction, guarded (see guard):
// a damaged page fails the transaction with an error wrapping ErrCorrupt.
func (g *group) write(fn func(*bbolt.Tx) error) error {
	start := time.Now()
	defer func() { g.busy.Add(int64(time.Since(start))) }()
	timed := func(tx *bbolt.Tx) error {
		start := time.Now()
		defer func() { g.applying.Add(int64(time.Since(start))) }()
		return fn(tx)
	}
	return g.seal.write(func() error {
		return guard(g.path, func() error { return update(g.db, timed) })
	})
}

// stats returns how many transactions were committed and how many Update
// calls they carried.
func (g *group) stats() (commits, calls int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.commits, g.calls
}

// WriterStats describes the work of a Bolt store's one writer since the
// store was opened. Busy over a span of wall time is the writer's share
// of it: near 1, writes queue behind one another and the store sets the
// pace of everything that writes (docs/performance.md).
type WriterStats struct {
	// Commits is the transactions committed; Updates the Update calls
	// they carried (a group commit carries several).
	Commits, Updates int64
	// Busy is the wall time write transactions took, from the start of
	// each until it was durable, the empty and failed ones included.
	Busy time.Duration
	// Applying is the part of Busy spent in the Update functions
	// themselves; Busy - Applying is bbolt's commit: its page writes and
	// its two fsyncs.
	Applying time.Duration
}

// Writer returns what the store's writer has done since it was opened.
func (b *Bolt) Writer() WriterStats {
	commits, calls := b.group.stats()
	return WriterStats{Commits: commits, Updates: calls,
		Busy: time.Duration(b.group.busy.Load()), Applying: time.Duration(b.group.applying.Load())}
}
