package engine

import (
	"fmt"
	"slices"

	"github.com/flowgate/flowgate/sdk"
)

// flowMoves is the flow state machine: for each status, the statuses it may
// move to. Staying in a non-terminal status is always allowed (a waiting
// flow may wait again with a new prompt). Terminal statuses have no moves.
// docs/state-machine.md draws this table; a test keeps the two in step.
// Read-only.
var flowMoves = map[sdk.FlowStatus][]sdk.FlowStatus{
	sdk.FlowQueued:  {sdk.FlowRunning, sdk.FlowWaiting, sdk.FlowBlocked, sdk.FlowSucceeded, sdk.FlowFailed, sdk.FlowCancelled, sdk.FlowLost},
	sdk.FlowRunning: {sdk.FlowQueued, sdk.FlowWaiting, sdk.FlowBlocked, sdk.FlowSucceeded, sdk.FlowFailed, sdk.FlowCancelled, sdk.FlowLost},
	sdk.FlowWaiting: {sdk.FlowQueued, sdk.FlowRunning, sdk.FlowBlocked, sdk.FlowSucceeded, sdk.FlowFailed, sdk.FlowCancelled, sdk.FlowLost},
	sdk.FlowBlocked: {sdk.FlowQueued, sdk.FlowRunning, sdk.FlowWaiting, sdk.FlowSucceeded, sdk.FlowFailed, sdk.FlowCancelled, sdk.FlowLost},
}

// taskMoves is the task state machine. running → queued is a retry that
// waits for its backoff. Read-only.
var taskMoves = map[sdk.TaskStatus][]sdk.TaskStatus{
	sdk.TaskQueued:  {sdk.TaskRunning, sdk.TaskFailed, sdk.TaskTimedOut, sdk.TaskCancelled, sdk.TaskLost},
	sdk.TaskRunning: {sdk.TaskQueued, sdk.TaskSucceeded, sdk.TaskFailed, sdk.TaskTimedOut, sdk.TaskCancelled, sdk.TaskLost},
}

// FlowMoves returns the statuses a flow in status from may move to.
func FlowMoves(from sdk.FlowStatus) []sdk.FlowStatus {
	return append([]sdk.FlowStatus(nil), flowMoves[from]...)
}

// TaskMoves returns the statuses a task in status from may move to.
func TaskMoves(from sdk.TaskStatus) []sdk.TaskStatus {
	return append([]sdk.TaskStatus(nil), taskMoves[from]...)
}

// checkFlowMove refuses a move that is not in the table. Leaving a terminal
// status is ErrTerminal; any other missing move is ErrIllegalTransition.
func checkFlowMove(f *sdk.Flow, to sdk.FlowStatus) error {
	err := checkMove("flow", f.ID, f.Status, to, f.Status.Terminal(), flowMoves)
	if f.Status.Terminal() {
		err = fmt.Errorf("%w; a finished flow is never reopened: start a new flow to carry the work on", err)
	}
	return err
}

// checkTaskMove is checkFlowMove for tasks.
func checkTaskMove(t *sdk.Task, to sdk.TaskStatus) error {
	return checkMove("task", t.ID, t.Status, to, t.Status.Terminal(), taskMoves)
}

func checkMove[S ~string](kind, id string, from, to S, terminal bool, moves map[S][]S) error {
	if terminal {
		return fmt.Errorf("%w: %s %s is already %s and cannot become %s", sdk.ErrTerminal, kind, id, from, to)
	}
	if to == from || slices.Contains(moves[from], to) {
		return nil
	}
	return fmt.Errorf("%w: %s %s cannot move from %s to %s (allowed: %v)", sdk.ErrIllegalTransition, kind, id, from, to, moves[from])
}
