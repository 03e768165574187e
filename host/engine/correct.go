package engine

import (
	"fmt"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// CorrectLostTask records the real end of attempt in.Attempt of task id,
// which was marked lost: a gateway took the task for lost (its own
// earlier run, a gateway that saw its lease end, maintenance) while the
// attempt's shim went on and recorded how the command ended. It is no
// transition (lost is terminal, and the state machine keeps no way out
// of it): it is a correction, made only from that record, and named so
// in the flow's history as a task.corrected entry whose summary carries
// evidence ("from the shim record of gateway X"), which is also appended
// to the task's errors.
//
// In the same transaction it moves the task's indexes, re-derives a
// mirrored flow (lost becomes the task's real outcome, with its own
// history entry and finish notice), queues a new finish notice of the
// task, and, for a managed flow, a second task.finished event carrying
// the corrected status and "corrected_from": "lost", so a controller told
// the task was lost hears how it really ended.
//
// It is refused with ErrIllegalTransition when the task is not lost at
// that attempt (it was settled otherwise, or runs again), and with
// ErrInvalid when in.Status is lost or not terminal.
func (e *Engine) CorrectLostTask(id string, in FinishInput, evidence string) (*stored.Task, error) {
	if !in.Status.Terminal() || in.Status == sdk.TaskLost {
		return nil, invalid("a lost task is corrected to the terminal status its attempt ended in, not %q", in.Status)
	}
	return e.changeTask(id, func(t *txn, task *stored.Task) error {
		if task.Status != sdk.TaskLost || task.Attempts != in.Attempt {
			return fmt.Errorf("%w: task %s is %s at attempt %d, not lost at attempt %d: nothing to correct",
				sdk.ErrIllegalTransition, id, task.Status, task.Attempts, in.Attempt)
		}
		task.Status = endStatus(task, in.Status)
		task.ExitCode, task.Signal, task.Reason, task.Result = in.ExitCode, in.Signal, in.Reason, in.Result
		if task.Status == sdk.TaskBlocked {
			task.Reason = "blocked"
		}
		if in.Error != "" {
			task.Errors = append(task.Errors, in.Error)
		}
		task.Errors = append(task.Errors, fmt.Sprintf("attempt %d: corrected: lost → %s %s", in.Attempt, in.Status, evidence))
		return nil
	})
}

// corrected says whether the write of task over old corrects a lost mark
// (see CorrectLostTask).
func corrected(old, task *stored.Task) bool {
	return old != nil && old.Status == sdk.TaskLost && task.Status != sdk.TaskLost && task.Status.Terminal()
}
