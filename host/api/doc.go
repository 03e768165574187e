// Package api is how commands reach flowgate's records: the Client
// interface, served in-process by Local when no gateway runs, and by a
// running gateway as HTTP/JSON on its unix socket (NewHandler), reached
// through Remote.
//
// # Errors over the wire
//
// A refusal travels as an HTTP status plus a JSON body
// {"error":{"code":…,"message":…}}; Remote turns it back into the same sdk
// sentinel, so errors.Is works the same on Local and Remote, and a revision
// conflict comes back as *sdk.RevisionConflictError with the current flow.
package api
