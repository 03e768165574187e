package engine

import (
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Listener is a part that acts on the changes the engine commits: the
// runner starts a queued task, event delivery wakes for a queued event.
// Changed is called after the write commits, on the writer's goroutine,
// once per change; it must not block, and it ignores the kinds it has no
// use for. A listener that panics is recovered (see Listen).
type Listener interface {
	Changed(Change)
}

// ListenerFunc is a function that is a Listener.
type ListenerFunc func(Change)

// Changed calls f.
func (f ListenerFunc) Changed(c Change) { f(c) }

// ListenerObserver hears of a listener that panicked; a gateway's
// metrics count them (metrics.Metrics).
type ListenerObserver interface {
	ListenerPanicked(name string)
}

// DefaultSlowListener is Config.SlowListener's default.
const DefaultSlowListener = 100 * time.Millisecond

// listener is one registered Listener with its name.
type listener struct {
	name string
	l    Listener
}

// listeners are the engine's listeners, read without a lock on every
// write and replaced whole when one is added.
type listeners struct {
	mu  sync.Mutex // serialises Listen
	all atomic.Pointer[[]listener]
}

// Listen adds l, under name, to the listeners told of every committed
// change. Each change goes to the listeners in the order they were
// added, so a gateway that adds them in one place says there who hears
// what first. A listener that panics is recovered: the engine logs the
// panic with the listener's name and the change, counts it
// (Config.Observer), and tells the next listener; the write stands. A
// listener slower than Config.SlowListener is logged by name. Listen is
// safe to call while the engine writes; a change committed before it
// returns may miss l.
func (e *Engine) Listen(name string, l Listener) {
	e.listeners.mu.Lock()
	defer e.listeners.mu.Unlock()
	var all []listener
	if cur := e.listeners.all.Load(); cur != nil {
		all = slices.Clone(*cur)
	}
	all = append(all, listener{name: name, l: l})
	e.listeners.all.Store(&all)
}

// tell hands each of changes to every listener, in order.
func (e *Engine) tell(changes []Change) {
	all := e.listeners.all.Load()
	if all == nil {
		return
	}
	for _, c := range changes {
		for _, l := range *all {
			e.tellOne(l, c)
		}
	}
}

// tellOne hands c to l, recovering a panic and timing the call.
func (e *Engine) tellOne(l listener, c Change) {
	start := time.Now()
	defer func() {
		if v := recover(); v != nil {
			e.log.Error("a change listener panicked; it missed this change, which is committed all the same",
				"listener", l.name, "change", c.Kind.String(), "flow", c.FlowID, "task", c.TaskID, "panic", v, "stack", string(debug.Stack()))
			if e.cfg.Observer != nil {
				e.cfg.Observer.ListenerPanicked(l.name)
			}
			return
		}
		if took := time.Since(start); took > e.cfg.SlowListener {
			e.log.Warn("a change listener was slow; the writer waited for it", "listener", l.name, "change", c.Kind.String(), "took", took)
		}
	}()
	l.l.Changed(c)
}
