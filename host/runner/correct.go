package runner

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// correct records the real end of attempt a of task, which a gateway
// marked lost while the attempt's shim went on (it was paused, cut off,
// killed and restarted, or another gateway took its tasks over): st, the
// status the shim recorded, is the evidence, and the task gets the
// outcome it gives (see engine.CorrectLostTask), cancelled for a task
// asked to stop that did not succeed, as settle has it. No retry follows a
// failure: the task ended when it was marked lost, and its flow may have
// moved on. A withdrawn attempt never ran its command, and stays lost.
func (r *Runner) correct(a *attempt, task *stored.Task, st shim.Status) {
	if st.Reason == shim.ReasonWithdrawn {
		return
	}
	res, err := readResult(filepath.Join(a.dir, "stdout"))
	if err != nil {
		r.log.Warn("read task output", "task", a.taskID, "error", err)
	}
	code := st.ExitCode
	status, desc := outcome(st)
	reason := st.Reason
	if task.CancelRequested() && status != sdk.TaskSucceeded {
		status, reason = sdk.TaskCancelled, "cancelled"
	}
	in := engine.FinishInput{Status: status, Attempt: a.n, ExitCode: &code, Signal: st.Signal, Reason: reason, Result: res}
	if status != sdk.TaskSucceeded {
		in.Error = fmt.Sprintf("attempt %d: %s", a.n, desc)
	}
	evidence := "from the shim record of its attempt in " + a.dir
	if r.cfg.Member != "" {
		evidence += ", read by gateway " + r.cfg.Member
	}
	_, err = r.eng.CorrectLostTask(task.ID, in, evidence)
	switch {
	case settledElsewhere(err):
		r.log.Debug("lost task not corrected: it moved on", "task", task.ID, "error", err)
	case r.hold.Observe(err) != nil:
		r.storeLog.Error("correct a task marked lost", "task", task.ID, "error", err)
	default:
		r.log.Info("task marked lost corrected from its shim record", "task", task.ID, "attempt", a.n, "status", status)
	}
}

// recoverLost corrects the tasks marked lost whose last attempt ran from
// this home and whose shim recorded how it ended (see correct), and, when
// follow is set, follows again those whose shim still runs, so that they
// are corrected when it ends. A task whose attempt has no record here ran
// from another home, or its shim died without a status: it stays lost.
func (r *Runner) recoverLost(ctx context.Context, follow bool) error {
	page, err := r.eng.ListTasks(engine.TaskFilter{Status: sdk.TaskLost})
	if err != nil {
		return fmt.Errorf("list lost tasks: %w", err)
	}
	for _, task := range page.Tasks {
		if !engine.Runnable(task) || task.Attempts == 0 || r.following(task.ID) {
			continue
		}
		dir := r.attemptDir(task.ID, task.Attempts)
		rec, err := shim.ReadRecord(dir)
		if err != nil {
			continue
		}
		a := newAttempt(task.ID, task.Attempts, dir, nil)
		switch {
		case rec.Status != nil:
			r.settle(ctx, a, *rec.Status)
			r.launchApart(a.handedTo)
		case follow && a.alive(rec):
			r.log.Info("following a task marked lost whose shim still runs", "task", task.ID, "attempt", task.Attempts)
			r.follow(a)
		}
	}
	return nil
}
