package throttle

import (
	"errors"
	"sync"
	"time"

	"github.com/flowgate/flowgate/host/store"
)

// Defaults for Backoff.
const (
	DefaultBase = 250 * time.Millisecond
	DefaultMax  = 5 * time.Second
)

// Backoff holds a loop back after failures: min(Base·2^(n-1), Max) after
// the nth failure in a row. The zero value is ready to use, with
// DefaultBase, DefaultMax and time.Now. It is safe for concurrent use.
type Backoff struct {
	// Base is the hold after the first failure; if zero, DefaultBase.
	Base time.Duration
	// Max caps the hold; if zero, DefaultMax.
	Max time.Duration
	// Now is the clock; if nil, time.Now.
	Now func() time.Time

	mu    sync.Mutex
	fails int
	until time.Time
}

// Fail records a failure and returns the hold it starts. A failure while
// a hold is on (a call that began before it) returns the rest of that
// hold and does not lengthen it: concurrent calls that fail together count
// as one failure.
func (b *Backoff) Fail() time.Duration {
	base, ceiling := b.Base, b.Max
	if base <= 0 {
		base = DefaultBase
	}
	if ceiling <= 0 {
		ceiling = DefaultMax
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if now.Before(b.until) {
		return b.until.Sub(now)
	}
	b.fails++
	d := ceiling
	if b.fails < 32 {
		d = min(base<<(b.fails-1), ceiling)
	}
	b.until = now.Add(d)
	return d
}

// Succeed clears the hold and the count of failures.
func (b *Backoff) Succeed() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fails, b.until = 0, time.Time{}
}

// Wait returns how long the hold lasts from now; zero when the loop may
// go on.
func (b *Backoff) Wait() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.until.IsZero() {
		return 0
	}
	return max(b.until.Sub(b.now()), 0)
}

// Failures returns how many failures in a row the hold counts.
func (b *Backoff) Failures() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fails
}

func (b *Backoff) now() time.Time {
	if b.Now == nil {
		return time.Now()
	}
	return b.Now()
}

// Observe feeds the outcome of a store write to b: an error wrapping
// store.ErrWriteFailed is a failure, nil a success, and any other error
// (a refusal, a conflict, a missing record) says nothing about the disk
// and leaves b as it is. It returns err.
func (b *Backoff) Observe(err error) error {
	switch {
	case err == nil:
		b.Succeed()
	case errors.Is(err, store.ErrWriteFailed):
		b.Fail()
	}
	return err
}
