package sdk

import "github.com/flowgate/flowgate/sdk/internal/wire"

// wireErrors carries errors across the plugin protocol: every sentinel of
// sdk/errcode by its code, a revision conflict with the current flow.
// Read-only.
var wireErrors = wire.Errors[Flow, *RevisionConflictError]{
	Conflict: func(e *RevisionConflictError) (int64, *Flow) { return e.Expected, e.Current },
	NewConflict: func(expected int64, cur *Flow) *RevisionConflictError {
		return &RevisionConflictError{Expected: expected, Current: cur}
	},
}
