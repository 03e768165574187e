package engine

import (
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// RequeueInput is a failed attempt that will be tried again.
type RequeueInput struct {
	// Attempt is the attempt that failed; a stale one is refused.
	Attempt int
	// RetryAt is when the next attempt may start.
	RetryAt time.Time
	// Error says why the attempt failed; it is appended to the errors.
	Error string
	// Class is how the failure was classified.
	Class sdk.FailureClass
	// InPlace marks the retry as the task's one in-place retry of this
	// run (a startup failure's or a diagnosis's); a task that had it
	// already is refused.
	InPlace bool
	// Diagnosis, if set, is the advice that led to the retry.
	Diagnosis *sdk.Diagnosis
	// Offline is how long the network was found down after the failed
	// attempt, before this retry was queued.
	Offline time.Duration
	// Resume marks the next attempt as resuming the failed one (its
	// session) after a network check.
	Resume bool
	// Gateway, if set, must be the gateway the task's record names as
	// running it (see FinishInput.Gateway).
	Gateway string
}

// RequeueTask moves a running task back to queued for its next attempt,
// keeping its id, attempts and errors.
func (e *Engine) RequeueTask(id string, in RequeueInput) (*stored.Task, error) {
	return e.changeTask(id, func(t *txn, task *stored.Task) error {
		if err := runningAttempt(task, in.Attempt); err != nil {
			return err
		}
		if err := ranBy(task, in.Gateway); err != nil {
			return err
		}
		if task.CancelRequested() {
			return fmt.Errorf("%w: task %s has a cancel request and is not retried", sdk.ErrCancelRequested, id)
		}
		if in.InPlace && task.InPlaceRetried {
			return invalid("task %s already had its one in-place retry in this run", id)
		}
		endAttemptTime(task, t.now)
		task.Status = sdk.TaskQueued
		task.Class = in.Class
		if in.Class != "" {
			logAttempt(task, in.Attempt, in.Class, in.Offline, in.Resume)
		}
		task.InPlaceRetried = task.InPlaceRetried || in.InPlace
		if in.Diagnosis != nil {
			task.Diagnosis = in.Diagnosis
		}
		task.RetryAt = in.RetryAt
		task.PID, task.PIDStartTime, task.ShimPID, task.ShimStartTime = 0, 0, 0, 0
		if in.Error != "" {
			task.Errors = append(task.Errors, in.Error)
		}
		t.notify(TaskQueued, id)
		return nil
	})
}

// maxAttemptLog bounds a task's attempt log: the latest are kept.
const maxAttemptLog = 32

// logAttempt records on task how attempt n failed and how long the
// network was down after it; resumeNext adds the next attempt, marked as
// resuming this one. An attempt already in the log is updated in place,
// so the record of a resumed attempt gets its class when it fails too.
func logAttempt(task *stored.Task, n int, class sdk.FailureClass, offline time.Duration, resumeNext bool) {
	rec := attemptRecord(task, n)
	rec.Class, rec.Offline = class, sdk.Duration(offline)
	if resumeNext {
		attemptRecord(task, n+1).Resumed = true
	}
	if over := len(task.AttemptLog) - maxAttemptLog; over > 0 {
		task.AttemptLog = task.AttemptLog[over:]
	}
}

// attemptRecord returns attempt n's entry in task's log, adding it.
func attemptRecord(task *stored.Task, n int) *sdk.AttemptRecord {
	for i := range task.AttemptLog {
		if task.AttemptLog[i].Attempt == n {
			return &task.AttemptLog[i]
		}
	}
	task.AttemptLog = append(task.AttemptLog, sdk.AttemptRecord{Attempt: n})
	return &task.AttemptLog[len(task.AttemptLog)-1]
}
