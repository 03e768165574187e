// Package api is how commands reach flowgate's records: the Client
// interface, served in-process by Local when no gateway runs, and by a
// running gateway as HTTP/JSON on its unix socket (NewHandler), reached
// through Remote.
//
// # The API's words
//
// The flow and task calls take and return the types of package apitype
// (filters, inputs, flow views, pages, history entries), not the
// engine's: a command speaks the API without importing the engine, and
// toapi.go converts at one seam, with the same JSON. The cron, trigger,
// plugin and audit calls still use their packages' own types, named in
// this package (CronJob, Trigger, PluginStatus, AuditReport, …) so that a
// command imports only api.
//
// # Reading without writing
//
// With no gateway, OpenLocal opens the store for writing and brings the
// records up to date first (runner.Reconcile). Commands that only read use
// OpenLocalReader instead: the file is opened read-only under a shared
// lock, the reconcile is previewed in memory (a store.Overlay, sealed
// before the command runs), and nothing in the home is created or
// changed; a home that does not exist fails with ErrNoHome.
//
// # Errors over the wire
//
// A refusal travels as an HTTP status plus a JSON body
// {"error":{"code":…,"message":…}}; Remote turns it back into the same sdk
// sentinel, so errors.Is works the same on Local and Remote, a revision
// conflict comes back as *sdk.RevisionConflictError with the current flow,
// and invalid cron job input as the *apitype.FlagError naming the flag
// (its flag and rule travel beside the message).
//
// # A gateway that dies mid-request
//
// Remote tells the two ways a gateway can be gone apart: a call that
// reached nothing fails with ErrNoGateway (nothing was sent, so sending
// it elsewhere is safe), and a call whose gateway stopped after the
// request went out fails with ErrNoAnswer (what it asked for may or may
// not have been done: read the records again, or resend a request that
// carries an idempotency key).
//
// # Cron
//
// The Cron methods of Client manage scheduled jobs. Local serves them from
// a Scheduler over its store; in a gateway, from the gateway's running
// Scheduler, so that a run started by hand takes turns with its loop.
// Runs start work, so commands that call RunJobNow or BackfillJob with no
// gateway running host one for their duration.
package api
