package runner

import (
	"slices"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
)

// The runner is the engine's Starter (engine.StartAtCreation): a task
// created while a slot is free and none waits is started by the commit
// that creates it and launched from there, as a slot handed over at a
// task's end is (handOff), without a commit of its own or a look at the
// queue.

// Reserve takes a free slot for a task created now that runs on label
// on, and returns the start to record with its creation. It takes none
// before the dispatch loop runs, while the gateway drains, while the
// store fails to write, or while launches that did not happen wait to be
// recorded: those tasks are queued and dispatched as before.
func (r *Runner) Reserve(on string) (engine.StartInput, bool) {
	if !r.dispatching.Load() || r.hold.Wait() > 0 || (r.cfg.Draining != nil && r.cfg.Draining()) {
		return engine.StartInput{}, false
	}
	if on != "" && !slices.Contains(r.cfg.Labels, on) {
		return engine.StartInput{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.unrecorded) > 0 || r.cfg.MaxRunning-len(r.active)-len(r.launching)-r.reserved <= 0 {
		return engine.StartInput{}, false
	}
	r.reserved++
	return r.starting(), true
}

// Release gives back a slot Reserve took whose task was not started.
func (r *Runner) Release() {
	r.mu.Lock()
	r.reserved--
	r.mu.Unlock()
	r.poke()
}

// Launch launches started, recorded running with its creation in a slot
// Reserve took, on a goroutine of its own that then follows it.
func (r *Runner) Launch(queued, started *stored.Task) {
	r.mu.Lock()
	r.reserved--
	r.launching[queued.ID] = true
	r.mu.Unlock()
	r.launchApart(&handOff{queued: queued, started: started})
}
