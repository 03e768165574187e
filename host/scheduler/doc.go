// Package scheduler is the loop that fires flowgate's cron jobs: it keeps
// the jobs, their run history and their delivery outbox, fires each job
// when it is due as an engine task or pipeline flow, follows the runs to
// their end, and reports them. When a job is due, what to do about missed
// times, overlapping runs and failures is decided by host/schedule, which
// is pure; this package applies those decisions.
//
// Every record is written through the engine (host/engine), the only
// writer of the store: Jobs and Scheduler read and write in the engine's
// "cron/" namespace (engine.CronRecords, with UpdateRecords and
// ViewRecords) and create work with the engine's task and flow calls. They
// read an injected clock, so the whole scheduler is tested without real
// waiting.
//
// # Jobs
//
// A Job is a scheduled job as stored: its schedule, its payload (a workflow
// file with args, or a command line), session, overlap policy, catch-up
// window, delivery, failure alert and runtime state (next and last run,
// last status and error, consecutive failures). JobInput holds a job as
// typed on the command line, one field per flag; JobInput.Build validates
// it and, like schedule.ParseSchedule, returns a *schedule.FlagError
// naming the flag at fault.
//
// Jobs keeps jobs as engine records under "cron/job/ID", with an index
// "cron/due/<next run>/ID" of the enabled jobs by next run (written with
// every job record, so finding the jobs due reads only those) and an index
// "cron/name/NAME" that keeps names unique (a second job with a name in use
// is refused with a *NameTakenError). Add, Edit and SetEnabled compute the
// next run from the injected clock at once; a disabled job has none. Get,
// Edit, SetEnabled and Remove take an id or a name, and return an error
// matching ErrJobNotFound (and sdk.ErrNotFound) when neither matches.
//
// # Scheduler
//
// Scheduler is the loop that fires jobs. The gateway starts it after the
// runner and stops it before; Start and Stop follow host/lifecycle (both
// idempotent; a Reindex that fails stops Start with an error naming the
// scheduler). Every Tick (default 1s) it reads the injected clock afresh,
// so a suspend or a clock jump is seen at the next tick, and TickOnce does
// one pass: settle the open runs of the jobs in the index "cron/open/ID",
// start a buffered run whose turn has come, then fire each job in the due
// index up to now. A pass over 10,000 idle jobs reads two empty index
// ranges. Start first rebuilds both indexes (Reindex).
//
// Firing takes schedule.PlanCatchUp's times from the last scheduled time
// handled (kept in "cron/sched/ID", with the active and buffered runs, the
// last failure time and why the scheduler disabled the job) to now. A time
// that fell due since this scheduler's last pass runs, however late the
// pass (one up to five Ticks after the last is late, not downtime); of the
// times that fell due while no pass ran (downtime, a suspend, a clock
// jump, a change of leader) those within the job's catch-up window run, or
// with none the latest, and the others are recorded "missed". Each time to
// run is claimed in one engine transaction that refuses a time that
// already has a record in "cron/run/ID/<unix nanos>", applies the overlap
// policy, and moves the job's NextRun on; so no time ever fires twice,
// across restarts. The work is created after the claim, through the
// engine: a command job becomes a task (runtime "cron", owner "cron:ID")
// with idempotency key "cron:ID:<scheduled RFC 3339>", so redoing a create
// after a crash returns the same task; a pipeline job becomes a flow
// managed by the "pipeline" controller with state {"file", "args", "cwd":
// the file's directory}, which has no idempotency key, so it carries that
// key as its Origin and a redo first looks for a flow of the job's owner
// with that origin. The window left is a crash inside CreateFlow's own
// commit, which the engine makes atomic.
//
// A run is active while its task is active or its flow is not terminal (a
// pipeline waiting at an approval gate holds its job). When it ends, the
// run record gets its status (ok, error, cancelled) and end time, and the
// job's state its last status and error and consecutive failures; after a
// failure a recurring job's next run is the first scheduled time not before
// the failure plus schedule.FailureBackoff, and at schedule.DisableAfter
// failures the job is disabled with the reason kept for Status. A one-shot
// job with DeleteAfterRun is removed once a run of it succeeds; its history
// stays, found by id. Each job's history keeps the newest HistoryMax (2000)
// ended runs and none older than HistoryAge (7 days); open runs are never
// pruned. Runs and Status read the history and the jobs for the CLI.
//
// # Runs by hand, backfills and sessions
//
// RunNow (cron run) claims the current instant as a run with trigger
// "manual", and Backfill (cron backfill) claims each scheduled time of a
// past range, oldest first, with trigger "backfill". Both go through the
// same claim as the loop, so the overlap policy applies (a backfill may
// override it) and a time already in the history never runs again; neither
// moves the job's schedule. A run's id is RunID: "cron:<job>:<time>".
//
// Every run's work gets FLOWGATE_CRON_JOB_ID, _JOB_NAME, _RUN_ID,
// _SCHEDULED and _TRIGGER in its environment (a pipeline passes them to
// every step), and FLOWGATE_SESSION: the run's id for an isolated job, NAME
// for "session:NAME", with FLOWGATE_SESSION_DIR, a directory under
// Config.SessionsDir that stays from run to run, so work can build on the
// last run's. A command job's run of "session:NAME" runs in that
// directory as a task of session NAME, so its runs join the lineage of
// NAME in that directory as a pipeline's steps do.
//
// # Delivery and failure alerts
//
// When a run ends, finish queues its report (Report: the run, and the
// task's result or the pipeline's output) for the job's delivery, and, when
// schedule.AlertDue says so, a failure alert for the alert's destination or
// else the delivery, in the same transaction (outbox.go). DeliverOnce,
// called by its own loop beside the scheduling one, sends what is due with
// Deliver: a webhook POST or a notify command. A failed delivery is retried
// with backoff, DeliveryAttempts times in all, then recorded as failed; it
// never fails the run. Each run records its Delivery and Alert status and
// error, and the job its last delivery's.
//
// # Several gateways
//
// With Config.Leader (several gateways on one etcd installation), only
// the elected leader ticks and delivers, and every record of a scheduled
// time (a claim, a missed time, the next run) is written with
// engine.UpdateRecordsFenced on the leadership's fence: a leader deposed
// since it looked cannot record a fire (store.ErrFenced). A manual run or
// a backfill is no scheduled time and is not fenced. With Config.Member,
// each run records the member that claimed it or recorded it missed
// (Run.Member), so the history says which gateway fired each time.
package scheduler
