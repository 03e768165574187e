package sdk

import (
	"fmt"
	"slices"
)

// FlowStatus is where a flow is in its life. See docs/state-machine.md for
// the moves the engine allows between them.
type FlowStatus string

// Flow statuses. Succeeded, failed, partial, cancelled and lost are
// terminal: a flow never leaves them. Partial is a flow that finished some
// but not all of its work; like failed, it may be continued.
const (
	FlowQueued    FlowStatus = "queued"
	FlowRunning   FlowStatus = "running"
	FlowWaiting   FlowStatus = "waiting"
	FlowBlocked   FlowStatus = "blocked"
	FlowSucceeded FlowStatus = "succeeded"
	FlowFailed    FlowStatus = "failed"
	FlowPartial   FlowStatus = "partial"
	FlowCancelled FlowStatus = "cancelled"
	FlowLost      FlowStatus = "lost"
)

// flowStatuses is every flow status in lifecycle order. Read-only.
var flowStatuses = [...]FlowStatus{FlowQueued, FlowRunning, FlowWaiting, FlowBlocked, FlowSucceeded, FlowFailed, FlowPartial, FlowCancelled, FlowLost}

// FlowStatuses returns every flow status in lifecycle order, in a new
// slice the caller may change.
func FlowStatuses() []FlowStatus { return slices.Clone(flowStatuses[:]) }

// Terminal reports whether s is an end state.
func (s FlowStatus) Terminal() bool {
	switch s {
	case FlowSucceeded, FlowFailed, FlowPartial, FlowCancelled, FlowLost:
		return true
	}
	return false
}

// Active reports whether s counts as active work (queued or running).
func (s FlowStatus) Active() bool { return s == FlowQueued || s == FlowRunning }

// Valid reports whether s is one of the known flow statuses.
func (s FlowStatus) Valid() bool { return slices.Contains(flowStatuses[:], s) }

// ParseFlowStatus returns the status named by s, or an ErrInvalid error that
// lists the valid names.
func ParseFlowStatus(s string) (FlowStatus, error) {
	if v := FlowStatus(s); v.Valid() {
		return v, nil
	}
	return "", fmt.Errorf("%w: unknown flow status %q (want one of %v)", ErrInvalid, s, flowStatuses)
}

// TaskStatus is where a task is in its life: queued, then running, then one
// of the terminal statuses.
type TaskStatus string

// Task statuses. All but queued and running are terminal. Blocked is a
// task that ran, exited 0 and said it needs a person (a {"blocked":…}
// progress line, sdk/progress's Blocked): its mirrored flow becomes
// blocked, and flowgate tasks flow retry runs it again once unblocked.
const (
	TaskQueued    TaskStatus = "queued"
	TaskRunning   TaskStatus = "running"
	TaskSucceeded TaskStatus = "succeeded"
	TaskBlocked   TaskStatus = "blocked"
	TaskFailed    TaskStatus = "failed"
	TaskTimedOut  TaskStatus = "timed_out"
	TaskCancelled TaskStatus = "cancelled"
	TaskLost      TaskStatus = "lost"
)

// taskStatuses is every task status in lifecycle order. Read-only.
var taskStatuses = [...]TaskStatus{TaskQueued, TaskRunning, TaskSucceeded, TaskBlocked, TaskFailed, TaskTimedOut, TaskCancelled, TaskLost}

// TaskStatuses returns every task status in lifecycle order, in a new
// slice the caller may change.
func TaskStatuses() []TaskStatus { return slices.Clone(taskStatuses[:]) }

// Terminal reports whether s is an end state.
func (s TaskStatus) Terminal() bool { return s.Valid() && !s.Active() }

// Active reports whether s is queued or running.
func (s TaskStatus) Active() bool { return s == TaskQueued || s == TaskRunning }

// Failure reports whether s counts as a failure (failed, timed_out, lost).
func (s TaskStatus) Failure() bool { return s == TaskFailed || s == TaskTimedOut || s == TaskLost }

// Valid reports whether s is one of the known task statuses.
func (s TaskStatus) Valid() bool { return slices.Contains(taskStatuses[:], s) }

// ParseTaskStatus returns the status named by s, or an ErrInvalid error that
// lists the valid names.
func ParseTaskStatus(s string) (TaskStatus, error) {
	if v := TaskStatus(s); v.Valid() {
		return v, nil
	}
	return "", fmt.Errorf("%w: unknown task status %q (want one of %v)", ErrInvalid, s, taskStatuses)
}

// SyncMode says who drives a flow.
type SyncMode string

const (
	// SyncManaged flows are driven by a controller plugin.
	SyncManaged SyncMode = "managed"
	// SyncTaskMirrored flows are created by the engine for a detached single
	// task; their status, goal and timing follow that task.
	SyncTaskMirrored SyncMode = "task_mirrored"
)

// ParseSyncMode returns the mode named by s, or an ErrInvalid error.
func ParseSyncMode(s string) (SyncMode, error) {
	switch m := SyncMode(s); m {
	case SyncManaged, SyncTaskMirrored:
		return m, nil
	}
	return "", fmt.Errorf("%w: unknown sync mode %q (want managed or task_mirrored)", ErrInvalid, s)
}
