package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// settle records how an attempt ended, from the shim's status: success,
// failure (retried when the policy allows), timeout with its reason, or
// cancel. It reports false when it could not read the task, and so
// recorded nothing: the attempt is not settled, and its pooled shim,
// which syncs the attempt's end only when it is not handed another
// (shim.MainWarm), is not handed one.
func (r *Runner) settle(ctx context.Context, a *attempt, st shim.Status) bool {
	// Once the task is settled no progress is recorded: read what is
	// left, which may take more than one read, but not without end (a
	// process that left the task's group may append for ever).
	reads := 0
	for reads < maxProgressReads && r.pumpProgress(a) {
		reads++
	}
	if reads == maxProgressReads && a.progressNote == "" {
		a.progressNote = fmt.Sprintf("progress not all read: %d MiB or more of it was left when the task ended", maxProgressReads*maxProgressRead>>20)
	}
	task, err := r.eng.GetTask(a.taskID)
	if err != nil {
		r.log.Error("settle: read task", "task", a.taskID, "error", err)
		return false
	}
	if task.Attempts != a.n {
		return true // another attempt runs, or ran
	}
	if task.Status == sdk.TaskLost {
		r.correct(a, task, st)
		return true
	}
	if task.Status.Terminal() {
		return true // settled already (by an earlier run of this code)
	}
	if st.Reason == shim.ReasonWithdrawn {
		r.requeueUnstarted(task, "its launch was withdrawn when a gateway restarted")
		return true
	}
	r.giveUp(a, &st)
	note := a.progressNote
	res, err := readResult(filepath.Join(a.dir, "stdout"))
	if err != nil {
		r.log.Warn("read task output", "task", a.taskID, "error", err)
		if errors.Is(err, shim.ErrNotRegular) {
			note = joinNotes(note, "output not read: "+err.Error())
		}
	}
	code := st.ExitCode
	status, desc := outcome(st)
	if task.CancelRequested() && status != sdk.TaskSucceeded {
		status = sdk.TaskCancelled
	}
	in := engine.FinishInput{Status: status, Attempt: a.n, ExitCode: &code, Signal: st.Signal, Reason: st.Reason, Result: res}
	if status == sdk.TaskSucceeded {
		if note != "" {
			in.Error = fmt.Sprintf("attempt %d: %s", a.n, note)
		}
		a.handOver(r.finishHandingOff(task, in))
		return true
	}
	in.Error = fmt.Sprintf("attempt %d: %s", a.n, desc)
	if status == sdk.TaskCancelled {
		in.Reason = "cancelled"
		in.Error = joinNotes(in.Error, note)
		a.handOver(r.finishHandingOff(task, in))
		return true
	}
	stderrTail, _ := readTail(filepath.Join(a.dir, "stderr"), tailBytes)
	if line := lastLine(stderrTail); line != "" && st.Reason == "" {
		in.Error += ": " + line
	}
	in.Error = joinNotes(in.Error, note)
	stdoutTail, _ := readTail(filepath.Join(a.dir, "stdout"), tailBytes)
	class, err := r.classes.Classify(Failure{
		Runtime: task.Runtime, Policy: task.Spec.Retry, ExitCode: st.ExitCode, Reason: st.Reason,
		Stderr: stderrTail, Stdout: stdoutTail, Reported: reported(task),
	})
	if err != nil {
		in.Error += " (" + err.Error() + ")"
		class = sdk.FailureFatal
	}
	in.Class = class
	r.afterFailure(ctx, task, a, in)
	return true
}

// joinNotes appends note, if any, to s.
func joinNotes(s, note string) string {
	if note == "" || s == "" {
		return s + note
	}
	return s + "; " + note
}

// outcome maps a shim status to the task status and a description.
func outcome(st shim.Status) (sdk.TaskStatus, string) {
	switch st.Reason {
	case "timeout":
		return sdk.TaskTimedOut, "stopped: it ran past its timeout"
	case "budget-exceeded":
		return sdk.TaskTimedOut, "stopped: it ran past its max budget"
	case "no-progress":
		return sdk.TaskTimedOut, "stopped: it reported no progress within its no-progress budget"
	case "cancelled":
		return sdk.TaskCancelled, "cancelled"
	case "start-failed":
		return sdk.TaskFailed, "could not start: " + st.Error
	}
	switch {
	case st.Signal != "":
		return sdk.TaskFailed, "killed by " + st.Signal
	case st.ExitCode == 0:
		return sdk.TaskSucceeded, ""
	}
	desc := fmt.Sprintf("exit code %d", st.ExitCode)
	if st.Error != "" {
		desc += ": " + st.Error
	}
	return sdk.TaskFailed, desc
}

// finish records how the task ended; it returns the error of that write.
func (r *Runner) finish(task *stored.Task, in engine.FinishInput) error {
	ended, err := r.eng.FinishTask(task.ID, in)
	return r.recordedEnd(task, in, ended, err)
}

// recordedEnd logs and counts the end of task as in asked for it, ended
// as the store recorded it or err; it returns err.
func (r *Runner) recordedEnd(task *stored.Task, in engine.FinishInput, ended *stored.Task, err error) error {
	if settledElsewhere(err) {
		r.log.Debug("task end not recorded: the task moved on", "task", task.ID, "error", err)
		return err
	}
	if r.hold.Observe(err) != nil {
		r.storeLog.Error("record task end", "task", task.ID, "error", err)
		return err
	}
	r.cfg.Observer.TaskEnded(ended.Status, ended.EndedAt.Sub(ended.StartedAt))
	r.log.Info("task ended", "task", task.ID, "attempt", in.Attempt, "status", in.Status, "reason", in.Reason)
	return nil
}

// retry queues the task's next attempt after its backoff: in says which
// attempt failed and how (its Class, InPlace, Diagnosis, Offline and
// Resume); retry sets when the next one starts and the error, why plus
// the delay. An InPlace retry is the task's one in-place retry of this
// run, granted by a startup failure or by a diagnosis that advised it.
// It returns the error of the write, nil when the task had moved on.
func (r *Runner) retry(task *stored.Task, why string, in engine.RequeueInput) error {
	delay := Backoff(task.Spec.Retry, in.Attempt, r.cfg.Rand())
	kind := "retrying in"
	if in.InPlace {
		kind = "its one in-place retry of this run, in"
	}
	in.RetryAt = r.cfg.Now().Add(delay)
	in.Error = fmt.Sprintf("%s (%s failure; %s %s)", why, in.Class, kind, delay.Round(time.Millisecond))
	if _, err := r.eng.RequeueTask(task.ID, in); settledElsewhere(err) {
		r.log.Debug("retry not queued: the task moved on", "task", task.ID, "error", err)
		return nil
	} else if r.hold.Observe(err) != nil {
		r.storeLog.Error("queue retry", "task", task.ID, "error", err)
		return err
	}
	r.log.Info("task retry queued", "task", task.ID, "attempt", in.Attempt, "class", in.Class, "delay", delay)
	return nil
}

// lose settles an attempt whose shim is gone without a status: the task's
// outcome is unknown, so it is marked lost, or run again only when its
// policy says the command is safe to repeat. A child left behind by the
// dead shim is stopped first.
func (r *Runner) lose(a *attempt, why string) {
	if rec, err := shim.ReadRecord(a.dir); err == nil && rec.Child != nil && !r.preview && shim.Alive(*rec.Child) {
		_ = shim.SignalGroup(rec.Child.PID, syscall.SIGKILL)
	}
	task, err := r.eng.GetTask(a.taskID)
	if err != nil || task.Status.Terminal() || task.Attempts != a.n {
		return
	}
	r.settleLost(task, why)
}

// settleLost marks the running attempt of task lost because of why, or
// queues it again when its policy says the command is safe to repeat and
// no one asked to cancel it (a task with a cancel request is never queued
// again, so it would be refused, and left running for ever). It returns
// the error of the write, nil when the task had moved on.
func (r *Runner) settleLost(task *stored.Task, why string) error {
	n := task.Attempts
	msg := fmt.Sprintf("attempt %d: lost: %s; the command may or may not have finished", n, why)
	p := task.Spec.Retry
	if p != nil && p.SafeToRepeat && n < p.MaxAttempts && !task.CancelRequested() {
		return r.retry(task, msg, engine.RequeueInput{Attempt: n, Class: sdk.FailureNeedsDiagnosis, Gateway: task.Gateway})
	}
	switch {
	case p == nil || !p.SafeToRepeat:
		msg += " (not re-run: its retry policy does not mark it safe_to_repeat)"
	case task.CancelRequested():
		msg += " (not re-run: a cancel was asked for)"
	}
	if err := r.finish(task, engine.FinishInput{Status: sdk.TaskLost, Attempt: n, Reason: "lost", Error: msg, Gateway: task.Gateway}); !settledElsewhere(err) {
		return err
	}
	return nil
}

// requeueUnstarted puts a task whose attempt certainly never ran its
// command back in the queue. The next attempt gets a new number (and so a
// fresh directory), and the note in its errors says this one did not run.
// It returns the error of the write.
func (r *Runner) requeueUnstarted(task *stored.Task, why string) error {
	if task.CancelRequested() {
		return r.finish(task, engine.FinishInput{Status: sdk.TaskCancelled, Attempt: task.Attempts, Reason: "cancelled",
			Error: fmt.Sprintf("attempt %d: cancelled before it started", task.Attempts)})
	}
	msg := fmt.Sprintf("attempt %d did not run: %s; queued again", task.Attempts, why)
	_, err := r.eng.RequeueTask(task.ID, engine.RequeueInput{Attempt: task.Attempts, Error: msg})
	if r.hold.Observe(err) != nil {
		r.storeLog.Error("requeue unstarted attempt", "task", task.ID, "error", err)
	}
	return err
}
