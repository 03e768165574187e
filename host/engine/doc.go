// Package engine is the only writer of flowgate's records: flows, tasks,
// their indexes and the event outbox. Everything else (the CLI, the API,
// controllers, the runner) changes records through it.
//
// # Revisions
//
// A flow's revision is the store's revision of the flow's key
// (store.Item.Revision, etcd's Version): 1 when the flow is created, one
// more on every write, which writes the flow's record once. The engine
// keeps no second counter: reads fill sdk.Flow.Revision from the store and
// the stored record holds none. Writers from outside the engine pass the
// revision they read (UpdateFlow, SetWaiting, Resume, Finish, Fail,
// RequestCancel); a stale one fails with *sdk.RevisionConflictError
// carrying the current flow, and nothing changes. docs/state-machine.md
// has the rules.
//
// # Transitions
//
// Status moves follow a table (FlowMoves, TaskMoves; drawn in
// docs/state-machine.md). Nothing leaves a terminal status. A flow with a
// cancel request only moves on toward cancelled, refuses new child tasks,
// and becomes cancelled in the transaction where its last active child
// settles.
//
// # Mirrored flows
//
// A task created without a flow is a detached single run: the engine
// creates its task_mirrored flow in the same transaction and re-derives the
// flow's status, goal and end time on every write to the task.
//
// # Outbox
//
// Every change a controller must react to appends an sdk.Event to the
// flow's outbox, with a per-flow sequence, in the same transaction as the
// change. Delivery (a later layer) reads Events and removes each with
// AckEvent once handled.
//
// # Indexes
//
// Secondary indexes by status, owner, controller, flow→tasks and end time
// are written in the same transaction as their record, so a list never
// sees a record without its index or the reverse.
package engine
