// Package sdk is what controller plugin and task authors import from
// flowgate: the records (Flow, Task), their statuses, the events a
// controller receives, the sentinel errors every flowgate API returns, and
// Serve, which runs a controller as a plugin. The gateway's end of the
// plugin protocol is package sdk/pluginclient; authors never need it.
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
// ErrOwnerMismatch, ErrInvalid, ErrIllegalTransition, ErrPluginShutdown).
// The message around a sentinel names the record and says what to do. The
// sentinels survive the plugin protocol in both directions: a Host call
// fails with the gateway's sentinel, and the gateway sees the sentinel a
// controller's HandleEvent returned.
//
// # Writing a controller
//
// A controller implements Controller and calls Serve from main (see the
// Serve example). The gateway starts the binary with hashicorp/go-plugin
// over gRPC, calls Info once, and then HandleEvent for each event of the
// flows whose controller_id is the controller's Info.Name. The Host handed
// to HandleEvent calls back into the gateway over one long-lived
// connection. Events come at least once: create tasks with idempotency
// keys and write flows with the revision you read. Log with Logger (hclog
// JSON on standard error, shown in the gateway's log); never print to
// standard output. Test a controller with package sdktest.
//
// Serve exits the process when the gateway that started it dies, within
// about a second, so a crashed gateway leaves no plugin behind.
//
// # Stages
//
// A controller can also provide typed pipeline stages: it lists them in
// Info.Stages and implements StageProvider, whose RunStage the gateway
// calls when a pipeline names one. Host.ListStages and Host.RunStage let
// a controller that runs pipelines reach the stages other plugins
// provide.
//
// # Watching for work
//
// A controller that is its own source of work sets Info.Watch and
// implements Watcher: the gateway calls Watch once per plugin process, and
// Watch creates flows with Host.CreateFlow, keyed by what each is for, as
// things arrive (examples/controllers/inbox).
//
// # Gates
//
// A flow that waits for a person parks with a Wait of kind GateApproval or
// GateInput at a Step. The gateway lists such gates and answers them: it
// records the Decision in the flow's Decisions, by step, and resumes the
// flow with a flow.resumed event whose data (Resumed) carries the
// decision too. It refuses at once, and the flow stays at the gate, a
// response that fails the wait's Schema and an approval its approver
// rules do not accept (Wait.CheckApproval).
//
// # Output
//
// What a flow produced is given to Finish (EndRequest.Output) and kept
// as the flow's Output, where the gateway and its users read it; the
// state stays the controller's own.
//
// # The protocol
//
// The wire is sdk/proto/flowgate/controller/v1/controller.proto
// (flowgate.controller.v1, go-plugin protocol version 1), published so
// that controllers can be written in any language; docs/protocol.md is its
// manual. In Setup the gateway serves the Host service once per plugin
// instance on a unix socket of its own and sends its address; the plugin
// dials it once. Records cross as the JSON of the sdk types, described by
// records.schema.json next to the .proto; errors as a gRPC status with a
// detail naming the sentinel by its code in sdk/errcode, the table the
// HTTP API uses too.
package sdk
