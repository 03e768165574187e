// Package audit checks flowgate's records for work that is stuck, lost,
// leaking or inconsistent: `flowgate tasks audit`. It reads through the
// engine and never writes; `flowgate tasks maintenance --apply` repairs
// what can be repaired (see docs/audit.md).
//
// # Findings
//
// Run returns findings of kind "task" or "task_flow", each with a
// severity (warn or error), a code, a detail, an age in milliseconds from
// the code's reference time, the record's status and id (token), and the
// record. They are sorted errors first, then the larger age first, then
// the older record first, as in the reference (OpenClaw's tasks audit).
//
// A task's reference time is its last change (updated_at; for a queued
// retry, its retry time if later); a flow's is its updated_at.
//
// # The reference's codes
//
//	code                     kind       severity          when
//	stale_queued             task       warn              queued, unchanged for 10m
//	stale_running            task       error             running, unchanged for 30m, and
//	                                                      neither shim nor child is alive
//	lost                     task       warn, then error  status lost: warn until its
//	                                                      cleanup_after (the task retention,
//	                                                      7d, after it ended), error after
//	                                                      or without cleanup_after
//	delivery_failed          task       warn              the task's event (task.finished,
//	                                                      task.milestone) is parked in its
//	                                                      flow's outbox
//	missing_cleanup          task       warn              terminal (not lost), no cleanup_after
//	inconsistent_timestamps  task       warn              started_at < created_at, ended_at <
//	                                                      started_at, or active with ended_at
//	restore_failed           task_flow  error             a flow or task record is damaged (does
//	                                                      not decode, or holds what flowgate
//	                                                      never writes): one finding each, the
//	                                                      rest audited; or the store could not
//	                                                      be read, and the lists count as empty
//	stale_running            task_flow  error             running, unchanged for 30m, no active task
//	stale_waiting            task_flow  warn              waiting, unchanged for 30m (from a
//	                                                      timer wait's until), no active task
//	stale_blocked            task_flow  warn              blocked without ended_at, unchanged for
//	                                                      30m, no active task
//	cancel_stuck             task_flow  warn              cancel requested 5m ago, nonterminal,
//	                                                      no active task
//	missing_linked_tasks     task_flow  error if running, managed, stale as above, no tasks at
//	                                    else warn         all, no blocked task, summary or wait
//	blocked_task_missing     task_flow  warn              blocked_task_id names no task of the flow
//	inconsistent_timestamps  task_flow  warn              updated_at < created_at, ended_at <
//	                                                      created_at, or ended_at < updated_at
//
// flowgate differs from the reference where the reference reports healthy
// work: a running task whose shim or child is alive (identity checked by
// pid and start time) is supervised, not stuck, and its own budgets bound
// it; a flow with an active task has not stalled, since the task's own
// findings report it if it has; missing_linked_tasks replaces the
// stale_* finding of the same flow, being the more specific diagnosis.
// flowgate has no chat delivery, so delivery_failed means the delivery of
// the task's event to its flow's controller failed until the event was
// parked (sdk.Event.Parked).
//
// # flowgate's own codes
//
//	code                    kind       severity  when
//	controller_unavailable  task_flow  error     a nonterminal managed flow whose controller plugin is
//	                                             not configured, failed or stopped, or has been starting
//	                                             or restarting for 5m; checked only where the plugins'
//	                                             state is known (inside a gateway), else listed in
//	                                             Report.Skipped
//	events_backlog          task_flow  warn      the flow's oldest undelivered event is 10m old
//	orphan_process          task       error     the shim or child of a task that ended 1m ago is
//	                                             still alive (pid and start time match)
//	dangling_task           task       error     the task's flow record does not exist
//	mirror_mismatch         task_flow  warn      a task_mirrored flow has no task,
//	                                             or its status is not the one the engine derives
//	                                             from that task's
//	index_mismatch          either     error     a secondary index entry without its record, or a
//	                                             record without its entry (engine.CheckIndexes); a
//	                                             missing status entry hides a task from dispatch
//	near_size_limit         either     warn      the record is engine.NearSizeLimit bytes or more (3/4
//	                                             of store.MaxValueSize)
//	continuation_not_       task_flow  warn      a continuation accepted 10m ago is still queued
//	started                                      without a task: no gateway has started it
//	cron_job_failing        task_flow  warn      an enabled cron job failed its last 3 runs or more in
//	                                             a row (Config.JobFailures); an error once the
//	                                             scheduler disabled it for failing
//
// # Consistency
//
// The audit reads tasks, then flows, then the outbox and the indexes, in
// separate snapshots, so it never holds up the gateway's writers. A
// record that looks wrong is read again before it is reported (a flow
// with its tasks in one snapshot), so work that moved on while the audit
// ran is not reported.
package audit
