// Package engine is the only writer of flowgate's records: flows, tasks,
// their indexes and the event outbox, and the records other parts keep in
// namespaces it lends them (see Records of other parts). Everything else
// (the CLI, the API, controllers, the runner, the scheduler) changes
// records through it, and no other package opens a store write
// transaction (TestOneWriter, in this package's tests, fails on one that
// does).
//
// # Contexts
//
// Every store call an engine makes is bounded by the context it is bound
// to: none for an engine New returns, the caller's for one WithContext
// returns. The API (api.Local) and a controller's Host bind the request's
// context per call, so a request that is given up stops its etcd round
// trips too.
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
// Status moves follow the tables of package sdk (sdk.FlowMoves,
// sdk.TaskMoves; drawn in docs/state-machine.md). Nothing leaves a terminal status. A flow with a
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
// AckEvent once handled, or a controller's Advance removes the event it
// handles in its own transaction (its ack).
//
// # History
//
// Every write of a flow or a task appends HistoryEntry records to the
// flow's history in the same transaction (saveFlow and saveTask do it, so
// no write path can skip it): one entry per flow write, named after what
// it changed, and one per lifecycle move, milestone, progress report or
// diagnosis of a task. Unlike the outbox, the history stays until the flow
// is pruned; it is bounded per flow (Config.HistoryLimit), dropping the
// oldest progress first and never milestones or decisions. History reads
// it a page at a time.
//
// # Indexes
//
// Secondary indexes by status, owner, controller, flow→tasks and end time
// are written in the same transaction as their record, so a list never
// sees a record without its index or the reverse.
//
// # Damaged records
//
// Every flow and task record is validated when it is decoded: one that
// does not decode, or that the engine could not have written (an unknown
// status or sync mode, no id or an id that is not its key's, a task
// without a flow, a managed flow without a controller), is a
// *DamagedRecord. Reads of it fail with it; lists skip it and return it in
// their page's Damaged; CheckIndexes reports it as RecordDamaged and
// RepairIndexes never indexes it; event delivery passes over its outbox.
// Quarantine moves it, bytes and reason, under "quarantine/", which
// ListQuarantine reads and backups keep with the rest of the store.
//
// # Chains and continuations
//
// Every flow belongs to a chain (sdk.Flow.ChainID, its own id for a first
// run). ContinueFlow accepts a chain's one continuation of a failed or
// partial flow, applying the rules of package flowrule and the chain's
// own (billing exhaustion and budget, kept in the Chain record under
// "chain/"), and stores the successor, its receipt, the chain record and
// the successor's flow.started in one transaction. GetChain reads a
// chain; PruneFlow deletes its record with its last run. docs/recovery.md
// is the user's manual.
//
// # Session lineages
//
// A task whose spec has a Session belongs to the lineage of that session
// name in its working directory, an sdk.Lineage under "lineage/" (archived
// ones under "lineage-archive/"). RecordProgress writes a session id the
// task reported into its lineage step in the same transaction as the
// progress line; BeginSession decides, when an attempt starts, whether the
// step continues its session, counting the wake and writing its banner;
// ArchiveLineage moves a lineage aside and never deletes it. A lineage that
// cannot be read is treated as absent. docs/agents.md is the user's manual.
//
// # Records of other parts
//
// A part of the host that keeps records the engine does not model (the
// scheduler's jobs, runs and delivery outbox, under CronRecords, "cron/")
// reads and writes them with ViewRecords and UpdateRecords. The
// transaction they lend is confined to one namespace: a Get, Scan, Put or
// Delete of a key outside it is refused with an error naming the key, so
// such a part can never touch a flow, a task or an index. UpdateRecords
// has the rules of every engine write: fn may run more than once and must
// be idempotent, an error before the first write is a refusal returned to
// the caller without disturbing the other writers of a group commit, and
// an error after a write rolls the write back. New namespaces are added to
// the list in records.go, never overlapping the engine's own prefixes.
package engine
