// Package apitype holds the words of flowgate's API: the requests, filters
// and answers that api.Client's methods take and return. It has no logic
// and imports only sdk, host/stored (the task as the store keeps it, with
// the runner's pids that `tasks show` prints; itself a leaf of records)
// and the standard library, so a command (package cli) can speak the API
// without importing the engine that serves it.
//
// The words come in families: flows and tasks (the engine's, with a
// continuation's answer, a session lineage to archive and a piece of a
// task's log), cron jobs, their runs and the scheduler's view of them
// (CronJob, CronRun, CronStatus), webhook triggers (Trigger), the
// controller plugins of a gateway (PluginStatus), the audit's report
// (AuditReport), the gateway's status and readiness (GatewayStatus,
// Readiness, WriteHealth), and what backup, check, salvage and a
// maintenance pass report (BackupResult, CheckReport, SalvageResult,
// MaintenanceReport). The limits a command checks its flags against
// (MaxAttempts, MaxNotifyTo, ...) are the engine's numbers.
//
// # Same shape as the engine
//
// Each type here that stands for another (in package engine, scheduler,
// trigger, pluginhost, audit, maintenance or store) has its fields, in
// the same order and with the same JSON tags, so an answer's JSON on the
// gateway's socket is byte for byte what that type encodes to. The
// others (GatewayStatus, CheckReport and the like) were always the API's
// own and keep the JSON they had. Package api
// converts between the two at one seam (its toapi*.go files), with Go
// conversions where the shapes allow and field by field where nested
// types differ in name; its tests fail when a field added to the other
// type is missing here or is not copied.
//
// # Methods
//
// The few methods here are plain data a reader needs, copied from the
// type they stand for and tested to answer the same: whether a cron run
// is still open, how a gate wait or a store's write problem reads, where
// a job's failure alerts go, which of a trigger's variables are unset,
// how two audit severities rank, the run center's URL, whether a check
// came out clean, what share of the store file is free. What needs the scheduler's state or its
// schedule arithmetic (a job's next times, its stagger offset) stays in
// package api (CronFireSchedule, CronStagger).
//
// # Example
//
// A command lists the failed flows of one owner through any api.Client:
//
//	page, err := c.ViewFlows(ctx, apitype.FlowFilter{
//		Status:   sdk.FlowFailed,
//		OwnerKey: "deploy",
//		Limit:    20,
//	})
package apitype
