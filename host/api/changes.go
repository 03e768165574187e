package api

import "sync"

// Changes is what a client offers that can tell when the records may
// have changed: the in-process client of a gateway hosted by the command
// (see gateway.Gateway.Client). A command that follows work waits on it
// instead of reading again on a timer; a client without it is read again
// on the command's timer.
type Changes interface {
	// Changed returns a channel that is closed at the next write to the
	// store. Take it before reading, so a write in between is not missed.
	Changed() <-chan struct{}
}

// Broadcast hands out channels that the next Notify closes: a wake-up
// for any number of waiters, which never blocks the notifier. Its zero
// value is ready to use.
type Broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

// Changed returns the channel the next Notify closes.
func (b *Broadcast) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

// Notify closes the channel Changed handed out, if any.
func (b *Broadcast) Notify() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}
