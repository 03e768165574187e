package lifecycle

import "errors"

// Error is a part that failed to start or stop. Its message names the part
// once, however many layers report it: "runner: start: create task log
// directory: …".
type Error struct {
	Part string // the part's name
	Op   string // "start" or "stop"
	Err  error  // what went wrong
}

func (e *Error) Error() string { return e.Part + ": " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the cause, so errors.Is sees through an Error.
func (e *Error) Unwrap() error { return e.Err }

// named returns err as an *Error for part and op, unless it already is one
// that names them.
func named(part, op string, err error) error {
	if le, ok := errors.AsType[*Error](err); ok && le.Part == part && le.Op == op {
		return err
	}
	return &Error{Part: part, Op: op, Err: err}
}
