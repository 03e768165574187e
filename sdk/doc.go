// Package sdk is what controller plugin and task authors import from
// flowgate: the records (Flow, Task), their statuses, the events a
// controller receives, and the sentinel errors every flowgate API returns.
//
// # Records
//
// A Flow is the durable record of multi-step work. A Task is one detached
// run under a flow. Every write to a flow bumps its Revision; writers from
// outside the engine pass the revision they read, and a stale one fails with
// a *RevisionConflictError that carries the current flow.
//
// # Errors
//
// Test errors with errors.Is against the sentinels (ErrNotFound,
// ErrRevisionConflict, ErrTerminal, ErrCancelRequested, ErrNotManaged,
// ErrOwnerMismatch, ErrInvalid, ErrIllegalTransition). The message around a
// sentinel names the record and says what to do.
package sdk
