package pluginclient

import (
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/internal/wire"
)

// wireErrors carries errors across the plugin protocol, as package sdk
// does on the plugin's end. Read-only.
var wireErrors = wire.Errors[sdk.Flow, *sdk.RevisionConflictError]{
	Conflict: func(e *sdk.RevisionConflictError) (int64, *sdk.Flow) { return e.Expected, e.Current },
	NewConflict: func(expected int64, cur *sdk.Flow) *sdk.RevisionConflictError {
		return &sdk.RevisionConflictError{Expected: expected, Current: cur}
	},
}
