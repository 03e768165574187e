package sdk

import (
	"errors"
	"fmt"
)

// Sentinel errors. Test for them with errors.Is; messages wrapped around
// them say which record and what to do.
var (
	// ErrNotFound means the flow, task or other record does not exist.
	ErrNotFound = errors.New("not found")
	// ErrRevisionConflict means the record changed since the caller read it.
	// The error is a *RevisionConflictError carrying the current record.
	ErrRevisionConflict = errors.New("revision conflict")
	// ErrTerminal means the record is in a terminal status and cannot move.
	ErrTerminal = errors.New("already terminal")
	// ErrCancelRequested means the flow has a cancel request and refuses the
	// change (for example a new child task).
	ErrCancelRequested = errors.New("cancellation already requested")
	// ErrNotManaged means a controller operation was aimed at a flow that
	// is not managed.
	ErrNotManaged = errors.New("flow is not managed")
	// ErrOwnerMismatch means the caller's owner key does not match the
	// record's.
	ErrOwnerMismatch = errors.New("owner key mismatch")
	// ErrInvalid means the input was malformed or missing a required field.
	ErrInvalid = errors.New("invalid input")
	// ErrIllegalTransition means the status move is not in the state
	// machine (docs/state-machine.md).
	ErrIllegalTransition = errors.New("illegal status transition")
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
