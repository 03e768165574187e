package runner

import (
	"context"
	"fmt"
	"sync"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// recoverWorkers is how many running tasks a starting runner looks at
// at once. Each look reads the attempt's record and may commit (a
// withdrawn attempt queued again), so the looks overlap their file reads
// and share the store's group commits instead of waiting one for the
// other: a restart with a thousand running tasks is not a thousand
// serial reads.
const recoverWorkers = 16

// recover settles or reattaches every task a previous runner left
// running: a task of another machine's gateway is left to it, or lost
// when that gateway is gone (see elsewhere); a status file means the task ended while no runner watched; a
// live shim is followed again (when follow is set); a dead shim without a
// status is lost; an attempt whose shim never started is queued again.
// Then a task marked lost whose shim ran from this home and recorded its
// end is corrected (see recoverLost). A starting runner (follow) looks at
// recoverWorkers tasks at once; Reconcile and Preview, which may run over
// a store.Overlay, one after another.
func (r *Runner) recover(ctx context.Context, follow bool) error {
	page, err := r.eng.ListTasks(engine.TaskFilter{Status: sdk.TaskRunning})
	if err != nil {
		return fmt.Errorf("list running tasks: %w", err)
	}
	if !follow {
		for _, task := range page.Tasks {
			r.recoverTask(ctx, task, false)
		}
		return r.recoverLost(ctx, false)
	}
	tasks := make(chan *stored.Task)
	var wg sync.WaitGroup
	for range min(recoverWorkers, len(page.Tasks)) {
		wg.Go(func() {
			for task := range tasks {
				r.recoverTask(ctx, task, true)
			}
		})
	}
	for _, task := range page.Tasks {
		tasks <- task
	}
	close(tasks)
	wg.Wait()
	return r.recoverLost(ctx, true)
}

// recoverTask settles or reattaches task, which a previous runner left
// running (see recover).
func (r *Runner) recoverTask(ctx context.Context, task *stored.Task, follow bool) {
	if !engine.Runnable(task) || r.elsewhere(task) {
		return
	}
	dir := r.attemptDir(task.ID, task.Attempts)
	if claimed, err := shim.Claimed(dir); err != nil || !claimed {
		if err == nil && claimMayBeLost(task) {
			r.lose(newAttempt(task.ID, task.Attempts, dir, nil), claimLostWhy)
			return
		}
		// Withdraw the attempt, race-free: a shim that comes later
		// finds it withdrawn and does not start the command (see
		// shim.Withdraw). A preview only looks, and shows the
		// attempt queued again as this would.
		withdrawn := err == nil && r.preview
		if !r.preview {
			withdrawn, err = shim.Withdraw(dir)
		}
		if err == nil && withdrawn {
			r.requeueUnstarted(task, "the gateway stopped before its shim started")
			return
		}
	}
	a := newAttempt(task.ID, task.Attempts, dir, nil)
	if follow {
		if !r.adopt(task) {
			return
		}
		r.log.Info("reattaching to task", "task", task.ID, "attempt", task.Attempts)
		r.follow(a)
		return
	}
	rec, err := shim.ReadRecord(dir)
	switch {
	case err == nil && rec.Status != nil:
		r.settle(ctx, a, *rec.Status)
		r.launchApart(a.handedTo)
	case err == nil && !a.alive(rec):
		r.lose(a, "its shim exited without recording how the task ended")
	case task.CancelRequested() && !r.preview:
		// A cancel asked for while no gateway followed the task: the
		// shim is told now, and the next look settles the task.
		r.signalShim(a)
	}
}

// Reconcile brings the records of home up to date once, without running
// anything: tasks that ended while no gateway watched are settled, tasks
// whose shim died are marked lost (or queued again when safe), and
// attempts that never started are queued again. Live tasks are left for
// the next gateway. Commands that open the store without a gateway call
// it, so what they show is current.
func Reconcile(ctx context.Context, eng *engine.Engine, home string) error {
	r, err := New(eng, Config{Home: home})
	if err != nil {
		return err
	}
	r.once = true
	return r.recover(ctx, false)
}

// Preview records in eng what Reconcile would, and does nothing else: no
// launch is withdrawn, no process signalled, no file written. Over a
// store.Overlay (see api.OpenLocalReader) that makes what a read-only command
// shows current, a dead shim's task shown as lost, while the store is left
// for the next writer to record it.
func Preview(ctx context.Context, eng *engine.Engine, home string) error {
	r, err := New(eng, Config{Home: home})
	if err != nil {
		return err
	}
	r.preview, r.once = true, true
	return r.recover(ctx, false)
}
