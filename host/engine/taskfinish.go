package engine

import (
	"cmp"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// FinishInput is how a task ended.
type FinishInput struct {
	// Status is the terminal status.
	Status sdk.TaskStatus
	// Attempt, if not zero, must be the running attempt; a stale report
	// is refused.
	Attempt  int
	ExitCode *int
	// Signal names the signal that killed the process, if one did.
	Signal string
	// Error, if set, is appended to the task's errors.
	Error string
	// Reason is the machine-readable why (see sdk.Task.Reason).
	Reason string
	Result *sdk.Result
	// Class is how a failure was classified; a billing failure marks the
	// task's chain billing-exhausted in the same transaction.
	Class sdk.FailureClass
	// Diagnosis, if set, replaces the task's diagnosis.
	Diagnosis *sdk.Diagnosis
	// Gateway, if set, must be the gateway the task's record names as
	// running it: a task another gateway took over since it was read
	// (see AdoptTask) is refused.
	Gateway string
}

// billingEvidence is the part of a billing failure's error kept on its
// chain: enough to say which code stopped it.
func billingEvidence(err string) string {
	const max = 200
	if len(err) > max {
		err = strings.ToValidUTF8(err[:max], "") + "…"
	}
	return err
}

// FinishTask moves task id to a terminal status, then re-derives a
// mirrored flow or, for a managed flow, queues task.finished and completes
// a pending cancel.
func (e *Engine) FinishTask(id string, in FinishInput) (*stored.Task, error) {
	if !in.Status.Terminal() {
		return nil, invalid("a task finishes in a terminal status, not %q", in.Status)
	}
	return e.changeTask(id, finishTask(in))
}

// finishTask is FinishTask's change of the task, in's status terminal.
func finishTask(in FinishInput) func(t *txn, task *stored.Task) error {
	return func(t *txn, task *stored.Task) error {
		if in.Status = endStatus(task, in.Status); in.Status == sdk.TaskBlocked {
			in.Reason = "blocked"
		}
		if err := checkTaskMove(task, in.Status); err != nil {
			return err
		}
		if in.Attempt != 0 {
			if err := runningAttempt(task, in.Attempt); err != nil {
				return err
			}
		}
		if err := ranBy(task, in.Gateway); err != nil {
			return err
		}
		t.endTask(task, in.Status, in.Error)
		task.ExitCode = in.ExitCode
		task.Signal = in.Signal
		task.Reason = in.Reason
		task.Result = in.Result
		task.RetryAt = time.Time{}
		if in.Class != "" {
			task.Class = in.Class
			logAttempt(task, cmp.Or(in.Attempt, task.Attempts), in.Class, 0, false)
		}
		if in.Diagnosis != nil {
			task.Diagnosis = in.Diagnosis
		}
		if in.Class != sdk.FailureBilling {
			return nil
		}
		f, err := loadFlow(t.tx, task.FlowID)
		if err != nil {
			return err
		}
		return t.markBillingExhausted(f.Chain(), billingEvidence(in.Error))
	}
}
