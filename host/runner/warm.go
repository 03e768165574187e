package runner

import (
	"context"
	"os"
	"sync"

	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/shell"
)

// warmSlot holds the one warm shim of a Shims.
type warmSlot struct {
	mu sync.Mutex
	// keep says KeepWarm runs: a warm shim taken is replaced.
	keep bool
	// shim waits for the next attempt; it was started from the lean
	// shim file of, as it was then.
	shim *shim.Warm
	of   os.FileInfo
	// starting says a warm shim is being started; starts counts them
	// so KeepWarm can wait for them.
	starting bool
	starts   sync.WaitGroup
}

// KeepWarm keeps one warm lean shim ("flowgate-shim --warm",
// shim.MainWarm) waiting for the next attempt from the first Launch on
// until ctx ends: Launch hands the attempt to it over the pipe it waits
// on instead of starting a process, which takes a Go process's start off
// a task's start, and starts the next warm shim in the background. A
// launch that finds none ready (the first one, several at once, or one
// right after another) starts its shim as without KeepWarm. None is
// started before the first launch, so a gateway that runs no task (or
// is busy reattaching to its tasks at start) pays for none. A warm shim handed an attempt is that attempt's shim
// in every way: its process is the one Launch returns and the one the
// attempt's record names.
//
// When ctx ends, KeepWarm closes the waiting shim's pipe, reaps it, and
// returns; a warm shim whose gateway dies exits the same way, its pipe
// closed by the kernel, and leaves nothing behind. There is no warm
// shim without the lean shim binary. Run one KeepWarm at a time.
func (s *Shims) KeepWarm(ctx context.Context) {
	w := &s.warm
	w.mu.Lock()
	w.keep = true
	w.mu.Unlock()
	<-ctx.Done()
	w.mu.Lock()
	w.keep = false
	idle := w.shim
	w.shim = nil
	w.mu.Unlock()
	if idle != nil {
		idle.Discard()
	}
	w.starts.Wait()
}

// handWarm hands attempt dir and env to the warm shim, if one started
// from the lean shim lean, as fi describes it, is ready, and starts the
// next one. It reports false when the caller must start the shim itself.
func (s *Shims) handWarm(lean string, fi os.FileInfo, dir string, env []string) (*os.Process, bool) {
	w := &s.warm
	w.mu.Lock()
	ready, of := w.shim, w.of
	w.shim = nil
	w.mu.Unlock()
	s.startWarm(lean, fi)
	if ready == nil {
		return nil, false
	}
	if !sameFile(of, fi) {
		ready.Discard() // the lean shim was replaced since it started
		return nil, false
	}
	p, err := ready.Hand(dir, env)
	if err != nil {
		s.log.Debug("the warm shim is gone; starting one for the task", "dir", dir, "error", err)
		return nil, false
	}
	return p, true
}

// startWarm starts a warm shim from lean in the background, unless one
// waits or is starting already, or KeepWarm does not run.
func (s *Shims) startWarm(lean string, fi os.FileInfo) {
	w := &s.warm
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.keep || w.shim != nil || w.starting {
		return
	}
	w.starting = true
	w.starts.Add(1)
	go func() {
		defer w.starts.Done()
		next, err := shim.StartWarm(lean, []string{shim.WarmArg}, shell.BaseEnv(os.Environ()))
		w.mu.Lock()
		w.starting = false
		keep := w.keep && err == nil && w.shim == nil
		if keep {
			w.shim, w.of = next, fi
		}
		w.mu.Unlock()
		if err != nil {
			s.log.Debug("start a warm shim; tasks start their own", "shim", lean, "error", err)
		} else if !keep {
			next.Discard()
		}
	}()
}
