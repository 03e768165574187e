package sdk

import (
	"fmt"

	"github.com/flowgate/flowgate/sdk/errcode"
)

// Sentinel errors. Test for them with errors.Is; messages wrapped around
// them say which record and what to do. They are the values of package
// sdk/errcode, which names them on the wire; use them from here.
var (
	// ErrNotFound means the flow, task or other record does not exist.
	ErrNotFound = errcode.ErrNotFound
	// ErrRevisionConflict means the record changed since the caller read it.
	// The error is a *RevisionConflictError carrying the current record.
	ErrRevisionConflict = errcode.ErrRevisionConflict
	// ErrTerminal means the record is in a terminal status and cannot move.
	ErrTerminal = errcode.ErrTerminal
	// ErrCancelRequested means the flow has a cancel request and refuses the
	// change (for example a new child task).
	ErrCancelRequested = errcode.ErrCancelRequested
	// ErrNotManaged means a controller operation was aimed at a flow that
	// is not managed.
	ErrNotManaged = errcode.ErrNotManaged
	// ErrOwnerMismatch means the caller's owner key does not match the
	// record's.
	ErrOwnerMismatch = errcode.ErrOwnerMismatch
	// ErrInvalid means the input was malformed or missing a required field.
	ErrInvalid = errcode.ErrInvalid
	// ErrIllegalTransition means the status move is not in the state
	// machine (docs/state-machine.md).
	ErrIllegalTransition = errcode.ErrIllegalTransition
	// ErrUnavailable means the gateway could not serve the call now
	// because a part it needs is starting or restarting (the plugin that
	// provides a stage, for Host.RunStage). Nothing was done: try again
	// later, for instance by failing the event so that it comes again.
	ErrUnavailable = errcode.ErrUnavailable
	// ErrResourceExhausted means the gateway refused the call because a
	// limit it enforces is reached (Host.CreateFlow past the cap on the
	// active flows a controller created); the message names the limit. Nothing
	// was done: try again once some of the work has ended.
	ErrResourceExhausted = errcode.ErrResourceExhausted
)

// RevisionConflictError is returned when an expected revision is stale. It
// matches ErrRevisionConflict under errors.Is and carries the flow as it is
// now, so the caller can re-read nothing and retry.
type RevisionConflictError struct {
	Expected int64
	Current  *Flow
}

// Error says which flow conflicted and what its revision is now.
func (e *RevisionConflictError) Error() string {
	if e.Current == nil {
		return fmt.Sprintf("revision conflict: expected revision %d", e.Expected)
	}
	return fmt.Sprintf("revision conflict on flow %s: expected revision %d, current revision is %d; re-read the flow and retry",
		e.Current.ID, e.Expected, e.Current.Revision)
}

// Is makes errors.Is(err, ErrRevisionConflict) true.
func (e *RevisionConflictError) Is(target error) bool { return target == ErrRevisionConflict }
