package errcode

import (
	"errors"
	"net/http"
	"slices"

	"google.golang.org/grpc/codes"
)

// The sentinels. Package sdk exports each under the same name, with its
// documentation; test for them there, with errors.Is.
var (
	ErrNotFound          = errors.New("not found")
	ErrRevisionConflict  = errors.New("revision conflict")
	ErrTerminal          = errors.New("already terminal")
	ErrCancelRequested   = errors.New("cancellation already requested")
	ErrNotManaged        = errors.New("flow is not managed")
	ErrOwnerMismatch     = errors.New("owner key mismatch")
	ErrInvalid           = errors.New("invalid input")
	ErrIllegalTransition = errors.New("illegal status transition")
	ErrPluginShutdown    = errors.New("plugin shut down")
	ErrUnavailable       = errors.New("unavailable")
	ErrResourceExhausted = errors.New("resource exhausted")
)

// Code is one sentinel and how it travels.
type Code struct {
	// Name is the stable code that names the sentinel on every wire:
	// "revision_conflict", "not_found", …
	Name string
	// Err is the sentinel.
	Err error
	// GRPC is the gRPC status code the plugin protocol sends it under.
	GRPC codes.Code
	// HTTP is the HTTP status the API answers it with; 0 means the API
	// never answers with this code (the error is internal there).
	HTTP int
}

// table lists every code, in the order Of tries them: the first sentinel
// an error matches wins. Refusals that depend on the record's current
// state are 409 Conflict in HTTP. Read-only.
var table = [...]Code{
	{"revision_conflict", ErrRevisionConflict, codes.Aborted, http.StatusConflict},
	{"not_found", ErrNotFound, codes.NotFound, http.StatusNotFound},
	{"invalid", ErrInvalid, codes.InvalidArgument, http.StatusBadRequest},
	{"terminal", ErrTerminal, codes.FailedPrecondition, http.StatusConflict},
	{"cancel_requested", ErrCancelRequested, codes.FailedPrecondition, http.StatusConflict},
	{"not_managed", ErrNotManaged, codes.FailedPrecondition, http.StatusConflict},
	{"owner_mismatch", ErrOwnerMismatch, codes.PermissionDenied, http.StatusConflict},
	{"illegal_transition", ErrIllegalTransition, codes.FailedPrecondition, http.StatusConflict},
	{"plugin_shutdown", ErrPluginShutdown, codes.Unavailable, 0},
	{"unavailable", ErrUnavailable, codes.Unavailable, 0},
	{"resource_exhausted", ErrResourceExhausted, codes.ResourceExhausted, http.StatusTooManyRequests},
}

// Of returns the entry of the first sentinel err matches under errors.Is,
// or false when it matches none.
func Of(err error) (Code, bool) {
	for _, c := range table {
		if errors.Is(err, c.Err) {
			return c, true
		}
	}
	return Code{}, false
}

// Named returns the entry whose Name is name, or false for an unknown
// code.
func Named(name string) (Code, bool) {
	for _, c := range table {
		if c.Name == name {
			return c, true
		}
	}
	return Code{}, false
}

// All returns every entry in the order Of tries them, in a new slice the
// caller may change.
func All() []Code { return slices.Clone(table[:]) }
