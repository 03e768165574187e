package runner

import (
	"context"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
)

// finishHandingOff records the end of task as finish does, and hands
// its slot to the oldest runnable queued task, if any, in the same
// commit (engine.FinishAndStart): the end and the start do not wait one
// for the other's commit, and no moment passes with the slot empty. The
// next task is then launched as dispatch launches one it started. With
// no task waiting, or before the dispatch loop runs, it is finish, and
// so it is when the hand-over fails to commit (it wrote nothing, and the
// next task's start may be what failed).
func (r *Runner) finishHandingOff(task *stored.Task, in engine.FinishInput) {
	next := r.nextForSlot()
	if next == nil {
		r.finish(task, in)
		return
	}
	ended, started, err := r.eng.FinishAndStart(task.ID, in, next.ID, engine.StartInput{Gateway: r.cfg.Member})
	if err != nil && !settledElsewhere(err) {
		// Nothing was written, and the start may be what failed: the end
		// is recorded alone, and dispatch looks at the queue again.
		r.log.Debug("hand-over not recorded; recording the end alone", "task", task.ID, "next", next.ID, "error", err)
		r.launched(next.ID)
		_ = r.finish(task, in)
		return
	}
	if r.recordedEnd(task, in, ended, err) != nil || started == nil {
		r.launched(next.ID) // not started: dispatch looks at the queue again
		return
	}
	launching := r.life.Go(func(ctx context.Context) {
		defer r.launched(next.ID)
		r.launchStarted(ctx, next, started)
	})
	if !launching {
		// Stopping: the start is taken back, as a restart takes back an
		// attempt no shim claimed.
		_ = r.requeueUnstarted(started, "the gateway stopped before launching it")
		r.launched(next.ID)
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
