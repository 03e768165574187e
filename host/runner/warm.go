package runner

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/shell"
)

// Defaults of Shims.MaxIdle and Shims.IdleTimeout.
const (
	DefaultMaxIdleShims    = 8
	DefaultShimIdleTimeout = time.Minute
)

// warmPool holds the idle shims of a Shims: warm ones started before
// their first attempt, and those whose attempt's end is recorded.
type warmPool struct {
	mu sync.Mutex
	// keep says KeepWarm runs: shims are kept, and a fresh one is
	// started when the pool runs dry.
	keep bool
	// idle waits for the next attempt, the most recently used last.
	idle []*idleShim
	// starting says a warm shim is being started; starts counts them
	// so KeepWarm can wait for them.
	starting bool
	starts   sync.WaitGroup
}

// idleShim is a shim of the pool: it was started from the shim file
// of (the lean shim, or the flowgate executable), as it was then, and is
// discarded by timer once it has waited IdleTimeout.
type idleShim struct {
	w     *shim.Warm
	of    os.FileInfo
	timer *time.Timer
	// reused says the shim has run an attempt.
	reused bool
}

// ShimRun is the shim of one attempt as the Shims that started it sees
// it (Shims.Start). Pass it to Shims.Done once the attempt is settled.
type ShimRun struct {
	// Process is the shim's process, the one the attempt's record names.
	Process *os.Process
	// Ended is closed once the shim has recorded the attempt's status,
	// or has exited.
	Ended <-chan struct{}
	// Exited is closed once the shim has exited and been reaped.
	Exited <-chan struct{}

	// Reused says the shim ran an attempt before this one.
	Reused bool

	pooled *idleShim
	code   int // the shim's exit code for the attempt, once Ended
}

// KeepWarm keeps shims ("flowgate-shim --warm", or "flowgate shim
// --warm" without the lean shim: shim.MainWarm) waiting for the next
// attempt from the first Start on until ctx ends: Start hands the attempt to an idle one over the pipe it waits on
// instead of starting a process, which takes a Go process's start off a
// task's start. The pool holds a warm shim started in the background
// whenever it runs dry, and every shim whose attempt's end the runner
// has recorded (Done), up to MaxIdle; one that waits IdleTimeout is let
// go. A launch that finds none ready starts its shim as without
// KeepWarm. None is started before the first launch, so a gateway that
// runs no task (or is busy reattaching to its tasks at start) pays for
// none. A pooled shim handed an attempt is that attempt's shim in every
// way: its process is the one Start returns and the one the attempt's
// record names, and it runs no other attempt until Done.
//
// When ctx ends, KeepWarm closes the idle shims' pipes, waits for them
// to exit, and returns; an idle shim whose gateway dies exits the same
// way, its pipe closed by the kernel, and leaves nothing behind, and a
// busy one exits once its attempt's end is recorded. Run one KeepWarm
// at a time.
func (s *Shims) KeepWarm(ctx context.Context) {
	p := &s.warm
	p.mu.Lock()
	p.keep = true
	p.mu.Unlock()
	<-ctx.Done()
	p.mu.Lock()
	p.keep = false
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, i := range idle {
		i.timer.Stop()
		i.w.Discard()
	}
	for _, i := range idle {
		<-i.w.Exited()
	}
	p.starts.Wait()
}

// handWarm hands attempt dir and env to an idle shim started as c says,
// from the file c.of describes, if one is ready, and starts a warm one
// when the pool is left empty. It returns nil when the caller must start
// the shim itself.
func (s *Shims) handWarm(c shimCommand, dir string, env []string) *ShimRun {
	p := &s.warm
	for {
		p.mu.Lock()
		var ready *idleShim
		if n := len(p.idle); n > 0 {
			ready, p.idle = p.idle[n-1], p.idle[:n-1]
		}
		empty := len(p.idle) == 0
		p.mu.Unlock()
		if empty {
			s.startWarm(c)
		}
		if ready == nil {
			return nil
		}
		ready.timer.Stop()
		if !sameFile(ready.of, c.of) {
			ready.w.Discard() // its file was replaced, or another is used, since it started
			continue
		}
		proc, err := ready.w.Hand(dir, env)
		if err != nil {
			s.log.Debug("an idle shim is gone; trying the next", "dir", dir, "error", err)
			continue
		}
		run := &ShimRun{Process: proc, Exited: ready.w.Exited(), pooled: ready, Reused: ready.reused}
		ended := make(chan struct{})
		run.Ended = ended
		go func() {
			select {
			case run.code = <-ready.w.Ended():
			case <-ready.w.Exited():
				run.code = -1
			}
			close(ended)
		}()
		return run
	}
}

// Done takes back the shim of run, whose attempt is settled when
// recorded is set: such a shim that is still there waits in the pool for
// the next attempt, unless the pool is full or KeepWarm does not run. Any
// other is let go: it exits once it has recorded the attempt's end. A
// shim started for its attempt alone is not taken back.
func (s *Shims) Done(run *ShimRun, recorded bool) {
	i := run.pooled
	if i == nil {
		return
	}
	if recorded {
		// The attempt's status is recorded, so the shim's notice of it
		// is on its way, or the shim is gone: either ends Ended.
		<-run.Ended
	}
	p := &s.warm
	p.mu.Lock()
	keep := recorded && run.code == 0 && p.keep && len(p.idle) < s.maxIdle()
	if keep {
		select {
		case <-i.w.Exited():
			keep = false
		default:
			i.reused = true
			p.idle = append(p.idle, i)
			i.timer = time.AfterFunc(s.idleTimeout(), func() { s.expire(i) })
		}
	}
	p.mu.Unlock()
	if !keep {
		i.w.Discard()
	}
}

// expire lets idle shim i go once it has waited IdleTimeout, unless it
// was taken meanwhile.
func (s *Shims) expire(i *idleShim) {
	p := &s.warm
	p.mu.Lock()
	for k, j := range p.idle {
		if j == i {
			p.idle = append(p.idle[:k], p.idle[k+1:]...)
			p.mu.Unlock()
			s.log.Debug("an idle shim waited its timeout; it exits", "pid", i.w.Process().Pid)
			i.w.Discard()
			return
		}
	}
	p.mu.Unlock()
}

// startWarm starts a warm shim as c says in the background, unless one
// is starting already, or KeepWarm does not run.
func (s *Shims) startWarm(c shimCommand) {
	p := &s.warm
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.keep || p.starting || s.maxIdle() == 0 {
		return
	}
	p.starting = true
	p.starts.Add(1)
	go func() {
		defer p.starts.Done()
		next, err := shim.StartWarm(c.path, c.args(shim.WarmArg), shell.BaseEnv(os.Environ()))
		p.mu.Lock()
		p.starting = false
		keep := p.keep && err == nil && len(p.idle) < s.maxIdle()
		i := &idleShim{w: next, of: c.of}
		if keep {
			p.idle = append(p.idle, i)
			i.timer = time.AfterFunc(s.idleTimeout(), func() { s.expire(i) })
		}
		p.mu.Unlock()
		if err != nil {
			s.log.Debug("start a warm shim; tasks start their own", "shim", c.path, "error", err)
		} else if !keep {
			next.Discard()
		}
	}()
}
