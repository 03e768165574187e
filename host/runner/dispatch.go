package runner

import (
	"context"
	"time"

	"github.com/flowgate/flowgate/host/stored"
)

// dispatchLoop starts queued tasks while there is room, whenever a task
// is queued or finishes, when a retry comes due, and at least every second;
// while the store fails to write, only once the hold is over.
func (r *Runner) dispatchLoop(ctx context.Context) {
	for {
		r.pruneHeld()
		wait := time.Second
		if next := r.dispatch(ctx); !next.IsZero() {
			wait = min(wait, max(next.Sub(r.cfg.Now()), time.Millisecond))
		}
		if hold := r.hold.Wait(); hold > 0 {
			wait, r.probe = hold, true
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-r.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// dispatch launches runnable tasks while there is room and returns the
// earliest retry time it saw among the tasks still waiting. It first
// records the launches that did not happen and could not be recorded, and
// stops launching once the store fails to record one.
//
// Each task is launched on a goroutine of its own, and dispatch does not
// wait for the launches: a slot freed while others launch is filled at
// once, not after the slowest launch of a batch. The launches that run at
// once share the store's group commits, and one launch's disk and
// fork/exec waits overlap the others'. A task being launched counts
// against MaxRunning (Runner.launching) until its launch returns. The
// first launch after the start or after the store failed to write goes
// alone first (see Runner.probe).
func (r *Runner) dispatch(ctx context.Context) (nextRetry time.Time) {
	r.recordLaunches()
	if r.cfg.Draining != nil && r.cfg.Draining() {
		return nextRetry
	}
	for ctx.Err() == nil && r.hold.Wait() == 0 {
		r.mu.Lock()
		free := r.cfg.MaxRunning - len(r.active) - len(r.launching) - r.reserved
		r.mu.Unlock()
		if free <= 0 {
			return nextRetry
		}
		// Tasks being launched are still queued until their start
		// commits: the queue is read past them.
		tasks, next, err := r.eng.RunnableTasksExcept(free, r.taken(), r.cfg.Labels...)
		if err != nil {
			r.storeLog.Error("list runnable tasks", "error", err)
			return nextRetry
		}
		nextRetry = next
		if tasks = r.takeLaunches(tasks, free); len(tasks) == 0 {
			return nextRetry
		}
		if r.probe {
			r.launch(ctx, tasks[0])
			r.launched(tasks[0].ID)
			if r.hold.Wait() > 0 {
				r.dropLaunches(tasks[1:])
				return nextRetry
			}
			r.probe, tasks = false, tasks[1:]
		}
		for _, t := range tasks {
			started := r.life.Go(func(ctx context.Context) {
				defer r.launched(t.ID)
				if ctx.Err() == nil && r.hold.Wait() == 0 {
					r.launch(ctx, t)
				}
			})
			if !started {
				r.launched(t.ID)
			}
		}
	}
	return nextRetry
}

// taken returns whether a task is being launched or followed now, for
// RunnableTasksExcept to pass over before it reads the task's record. It
// answers from a copy taken now, so that no store read waits on r.mu;
// takeLaunches looks again under the lock.
func (r *Runner) taken() func(id string) bool {
	r.mu.Lock()
	ids := make(map[string]bool, len(r.launching)+len(r.active))
	for id := range r.launching {
		ids[id] = true
	}
	for id := range r.active {
		ids[id] = true
	}
	r.mu.Unlock()
	return func(id string) bool { return ids[id] }
}

// takeLaunches returns up to n of tasks that are not being launched
// already, and marks them as being launched.
func (r *Runner) takeLaunches(tasks []*stored.Task, n int) []*stored.Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	var take []*stored.Task
	for _, t := range tasks {
		if len(take) == n {
			break
		}
		if !r.launching[t.ID] && r.active[t.ID] == nil {
			r.launching[t.ID] = true
			take = append(take, t)
		}
	}
	return take
}

// dropLaunches unmarks tasks taken for a launch that will not happen now.
func (r *Runner) dropLaunches(tasks []*stored.Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range tasks {
		delete(r.launching, t.ID)
	}
}

// launched ends the launch of task id. When it left no attempt to follow
// (it failed, or the task was not started), the slot is free again and
// dispatch is asked to look at the queue.
func (r *Runner) launched(id string) {
	r.mu.Lock()
	delete(r.launching, id)
	running := r.active[id] != nil
	r.mu.Unlock()
	if !running {
		r.poke()
	}
}
