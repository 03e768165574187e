package sdk

import (
	"fmt"
	"slices"
)

// The state machines of flows and tasks are part of the contract between a
// controller and the gateway: the gateway's engine refuses every move these
// tables do not allow, and sdktest's Host applies the same tables, so a
// controller tested there meets the same refusals under a gateway.
// docs/state-machine.md draws both tables; a test keeps the drawing and
// this file in step.

// FlowMoves returns the statuses a flow in status from may move to, in
// lifecycle order, as a new slice the caller may keep. A terminal or
// unknown status has none. Staying in a non-terminal status is also
// allowed (a waiting flow may wait again with a new prompt) and is not
// listed.
func FlowMoves(from FlowStatus) []FlowStatus {
	switch from {
	case FlowQueued:
		return []FlowStatus{FlowRunning, FlowWaiting, FlowBlocked, FlowSucceeded, FlowFailed, FlowPartial, FlowCancelled, FlowLost}
	case FlowRunning:
		return []FlowStatus{FlowQueued, FlowWaiting, FlowBlocked, FlowSucceeded, FlowFailed, FlowPartial, FlowCancelled, FlowLost}
	case FlowWaiting:
		return []FlowStatus{FlowQueued, FlowRunning, FlowBlocked, FlowSucceeded, FlowFailed, FlowPartial, FlowCancelled, FlowLost}
	case FlowBlocked:
		return []FlowStatus{FlowQueued, FlowRunning, FlowWaiting, FlowSucceeded, FlowFailed, FlowPartial, FlowCancelled, FlowLost}
	}
	return nil
}

// TaskMoves returns the statuses a task in status from may move to, as a
// new slice. running → queued is a retry that waits for its backoff; a
// queued task never succeeds without running first. A terminal or unknown
// status has none.
func TaskMoves(from TaskStatus) []TaskStatus {
	switch from {
	case TaskQueued:
		return []TaskStatus{TaskRunning, TaskFailed, TaskTimedOut, TaskCancelled, TaskLost}
	case TaskRunning:
		return []TaskStatus{TaskQueued, TaskSucceeded, TaskBlocked, TaskFailed, TaskTimedOut, TaskCancelled, TaskLost}
	}
	return nil
}

// CanMoveFlow reports whether a flow in status from may become to: to is
// from and from is not terminal, or FlowMoves(from) lists to. It ignores
// cancel requests; CheckFlowMove applies them too.
func CanMoveFlow(from, to FlowStatus) bool {
	return (to == from && from.Valid() && !from.Terminal()) || slices.Contains(FlowMoves(from), to)
}

// CanMoveTask reports whether a task in status from may become to: to is
// from and from is not terminal, or TaskMoves(from) lists to.
func CanMoveTask(from, to TaskStatus) bool {
	return (to == from && from.Active()) || slices.Contains(TaskMoves(from), to)
}

// CheckFlowMove returns nil if flow f may become to, else why not, in the
// order the gateway checks: ErrTerminal when f has ended (a finished flow is
// never reopened), ErrIllegalTransition when the table has no such move,
// and ErrCancelRequested when f has a cancel request and to is neither its
// status nor cancelled, failed or lost (a cancel request is sticky: the
// flow only moves on toward its end).
func CheckFlowMove(f *Flow, to FlowStatus) error {
	switch {
	case f.Status.Terminal():
		return fmt.Errorf("%w: flow %s is already %s and cannot become %s; a finished flow is never reopened: start a new flow to carry the work on",
			ErrTerminal, f.ID, f.Status, to)
	case !CanMoveFlow(f.Status, to):
		return fmt.Errorf("%w: flow %s cannot move from %s to %s (allowed: %v)", ErrIllegalTransition, f.ID, f.Status, to, FlowMoves(f.Status))
	case f.CancelRequested() && to != f.Status && to != FlowCancelled && to != FlowFailed && to != FlowLost:
		return fmt.Errorf("%w: flow %s has a cancel request and cannot become %s; it becomes cancelled when its active tasks settle",
			ErrCancelRequested, f.ID, to)
	}
	return nil
}

// CheckTaskMove returns nil if task t may become to, else ErrTerminal when
// t has ended or ErrIllegalTransition when the table has no such move.
func CheckTaskMove(t *Task, to TaskStatus) error {
	switch {
	case t.Status.Terminal():
		return fmt.Errorf("%w: task %s is already %s and cannot become %s", ErrTerminal, t.ID, t.Status, to)
	case !CanMoveTask(t.Status, to):
		return fmt.Errorf("%w: task %s cannot move from %s to %s (allowed: %v)", ErrIllegalTransition, t.ID, t.Status, to, TaskMoves(t.Status))
	}
	return nil
}

// flowRetryFrom is every status a task_mirrored flow may be retried from,
// in lifecycle order. Read-only.
var flowRetryFrom = [...]FlowStatus{FlowBlocked, FlowFailed, FlowCancelled, FlowLost}

// FlowRetryFrom returns the statuses a task_mirrored flow may be retried
// from (flowgate tasks flow retry), as a new slice. A retry is the one
// way out of a terminal status: the flow goes back to queued under the
// same id with a new task, which the flow then mirrors. It is the
// single run's equivalent of a managed flow's continuation, which keeps
// the failed flow as it is and starts a successor; a managed flow's
// history belongs to its controller, so it is never retried.
func FlowRetryFrom() []FlowStatus { return slices.Clone(flowRetryFrom[:]) }

// CheckFlowRetry returns nil if flow f may be retried, else why not:
// ErrIllegalTransition for a managed flow (the message says to continue
// it instead) and for a flow that is still queued or running, ErrTerminal
// for one that succeeded.
func CheckFlowRetry(f *Flow) error {
	switch {
	case f.SyncMode == SyncManaged:
		return fmt.Errorf("%w: flow %s is managed by controller %s, which decides its steps; a retry runs a single task again: carry a managed flow on with flowgate tasks flow continue %s",
			ErrIllegalTransition, f.ID, f.ControllerID, f.ID)
	case slices.Contains(flowRetryFrom[:], f.Status):
		return nil
	case f.Status.Terminal():
		return fmt.Errorf("%w: flow %s is %s; only a run that is %v can be retried: start a new one with flowgate tasks run", ErrTerminal, f.ID, f.Status, flowRetryFrom)
	}
	return fmt.Errorf("%w: flow %s is %s; only a run that is %v can be retried: wait for it to end, or cancel it with flowgate tasks flow cancel %s", ErrIllegalTransition, f.ID, f.Status, flowRetryFrom, f.ID)
}
