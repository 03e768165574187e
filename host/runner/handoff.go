package runner

import (
	"context"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
)

// handOff is a queued task whose start was committed with the end of
// the task whose slot it takes: queued as read, started as recorded.
type handOff struct{ queued, started *stored.Task }

// finishHandingOff records the end of task as finish does, and hands
// its slot to the oldest runnable queued task, if any, in the same
// commit (engine.FinishAndStart): the end and the start do not wait one
// for the other's commit, and no moment passes with the slot empty. It
// returns the task started so, which the goroutine that follows the
// ended attempt launches once its shim is back in the pool (followOn),
// or nil. With no task waiting, or before the dispatch loop runs, it is
// finish, and so it is when the hand-over fails to commit (it wrote
// nothing, and the next task's start may be what failed).
func (r *Runner) finishHandingOff(task *stored.Task, in engine.FinishInput) *handOff {
	next := r.nextForSlot()
	if next == nil {
		r.finish(task, in)
		return nil
	}
	ended, started, err := r.eng.FinishAndStart(task.ID, in, next.ID, r.starting())
	if err != nil && !settledElsewhere(err) {
		// Nothing was written, and the start may be what failed: the end
		// is recorded alone, and dispatch looks at the queue again.
		r.log.Debug("hand-over not recorded; recording the end alone", "task", task.ID, "next", next.ID, "error", err)
		r.launched(next.ID)
		_ = r.finish(task, in)
		return nil
	}
	if r.recordedEnd(task, in, ended, err) != nil || started == nil {
		r.launched(next.ID) // not started: dispatch looks at the queue again
		return nil
	}
	return &handOff{queued: next, started: started}
}

// launchHandedOff launches h, a task handed a slot, and returns its
// attempt, followed by the runner, or nil when none started. A runner
// that is stopping launches nothing: the start is taken back, as a
// restart takes back an attempt no shim claimed.
func (r *Runner) launchHandedOff(ctx context.Context, h *handOff) *attempt {
	defer r.launched(h.queued.ID)
	if ctx.Err() != nil {
		_ = r.requeueUnstarted(h.started, "the gateway stopped before launching it")
		return nil
	}
	a := r.startAttempt(ctx, h.queued, h.started)
	if a != nil {
		r.mu.Lock()
		r.active[a.taskID] = a
		r.mu.Unlock()
	}
	return a
}

// launchApart launches h, a slot handed over by the end of an attempt
// settled outside followOn (one found ended at a restart), in a
// goroutine of its own that then follows its attempt; nil is nothing to
// launch.
func (r *Runner) launchApart(h *handOff) {
	if h == nil {
		return
	}
	launching := r.life.Go(func(ctx context.Context) {
		if a := r.launchHandedOff(ctx, h); a != nil {
			r.followOn(ctx, a)
		}
	})
	if !launching {
		// Stopping: the start is taken back, as a restart takes back an
		// attempt no shim claimed.
		_ = r.requeueUnstarted(h.started, "the gateway stopped before launching it")
		r.launched(h.queued.ID)
	}
}

// nextForSlot takes the oldest runnable queued task for the slot of a
// task that ends now, marking it as being launched, or returns nil: when
// none waits, the dispatch loop does not run yet, the gateway drains, or
// the store failed to write.
func (r *Runner) nextForSlot() *stored.Task {
	if !r.dispatching.Load() || r.hold.Wait() > 0 || (r.cfg.Draining != nil && r.cfg.Draining()) {
		return nil
	}
	tasks, _, err := r.eng.RunnableTasksExcept(1, r.taken(), r.cfg.Labels...)
	if err != nil {
		return nil
	}
	if take := r.takeLaunches(tasks, 1); len(take) == 1 {
		return take[0]
	}
	return nil
}
