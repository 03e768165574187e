// Package scheduler is the pure core of flowgate's job scheduler: when a job
// is due, what to do about runs missed while the host was down, what to do
// when a run comes due while the previous one is still going, and how
// failures back off, alert and disable a job.
//
// The pure parts (schedules, catch-up, overlap, failures) read no clock
// and touch no storage: every function takes the times it needs. Jobs and
// Scheduler keep their state as engine records and read an injected clock,
// so the whole scheduler is tested without real waiting.
//
// # Schedules
//
// A Schedule has one of three kinds, one per CLI flag:
//
//   - KindCron (--cron): a 5-field (minute hour day-of-month month
//     day-of-week) or 6-field (seconds first) expression, or a descriptor
//     (@yearly, @monthly, @weekly, @daily, @hourly, @every DUR), parsed by
//     robfig/cron/v3 and read in the IANA zone --tz (UTC if unset).
//   - KindEvery (--every): every interval, at Anchor + k·Every. Anchoring
//     keeps the phase fixed however long runs take. --tz is refused: an
//     interval is elapsed time.
//   - KindAt (--at): once, at an instant.
//
// ParseSchedule turns raw flags into a Schedule; Schedule.Validate checks a
// literal one. Both return a *FlagError that names the flag and the rule
// (for a cron expression, the field at fault) and matches ErrInvalidSchedule.
//
// Schedule.Next gives the first fire time after an instant and
// Schedule.Between lists the fire times in (from, to], for catch-up and
// backfill, up to MaxTimes.
//
// # Daylight saving time
//
// Cron expressions name wall-clock times, and DST makes some wall times
// happen never or twice:
//
//   - A time in a spring-forward gap (02:30 on the night clocks go from 02:00
//     to 03:00) follows the DST policy, --dst. DSTShift, the default, runs it
//     at the first valid instant after the gap (03:00); DSTSkip drops it for
//     that day. Either way it fires at most once: times shifted onto the same
//     instant, or onto a time the expression names anyway, merge.
//   - A time in a fall-back repeat (01:30 on the night clocks go from 02:00
//     back to 01:00) fires once, at its first occurrence.
//   - An expression for every hour (hour field "*", as in "0 * * * *" or
//     "*/15 * * * *") follows the hours that actually happen, as Vixie cron
//     does: it runs in both repeated hours of a fall-back night, and a
//     spring-forward hour that does not exist simply does not occur.
//
// Intervals (--every, @every) are elapsed time and ignore DST.
//
// robfig/cron v3.0.1 on its own skips gap times with no shift option and
// fires repeated times twice, and its @every counts from the call rather
// than an anchor. So the package uses robfig to parse, and Next walks wall
// times itself over robfig's parsed fields and maps each one to an instant
// with the rules above, except for every-hour expressions, where robfig's
// walk over instants is already the right rule. robfig's @every also clamps intervals below a
// second and its parse errors do not name the field; ParseSchedule refuses
// the former and finds the field for the latter. TestRobfigBehaviour pins
// these observations.
//
// # Catch-up
//
// PlanCatchUp decides what to run after downtime, a suspend or a clock jump,
// from the last scheduled time already handled and a window
// (--catchup-window). With window zero the latest missed time runs once;
// otherwise every missed time within the window runs, oldest first. Older
// times come back separately so the scheduler can record them as missed
// rather than drop them silently. Nothing at or before the last handled time
// is ever returned, so a restart cannot fire a time twice.
//
// # Overlap
//
// Decide applies an Overlap policy (Temporal's set: skip, buffer_one,
// buffer_all, cancel_other, allow_all) to a run that has come due, given
// whether a run of the job is active and how many are buffered, and returns
// the Action to take.
//
// # Failures
//
// FailureBackoff gives the wait after consecutive failures of a recurring job
// (30s, 1m, 5m, 15m, then 60m). ShouldDisable says when a job should be
// disabled (DisableAfter consecutive failures) and why. AlertDue says when a
// failure alert is due, given a threshold and a cooldown.
//
// # Jobs
//
// A Job is a scheduled job as stored: its schedule, its payload (a workflow
// file with args, or a command line), session, overlap policy, catch-up
// window, delivery, failure alert and runtime state (next and last run,
// last status and error, consecutive failures). JobInput holds a job as
// typed on the command line, one field per flag; JobInput.Build validates
// it and, like ParseSchedule, returns a *FlagError naming the flag at fault.
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
// runner and stops it before. Every Tick (default 1s) it reads the injected
// clock afresh, so a suspend or a clock jump is seen at the next tick, and
// TickOnce does one pass: settle the open runs of the jobs in the index
// "cron/open/ID", start a buffered run whose turn has come, then fire each
// job in the due index up to now. A pass over 10,000 idle jobs reads two
// empty index ranges. Start first rebuilds both indexes (Reindex).
//
// Firing takes PlanCatchUp's times from the last scheduled time handled
// (kept in "cron/sched/ID", with the active and buffered runs, the last
// failure time and why the scheduler disabled the job) to now. Missed times
// are recorded as "missed". Each time to run is claimed in one store
// transaction that refuses a time that already has a record in
// "cron/run/ID/<unix nanos>", applies the overlap policy, and moves the
// job's NextRun on; so no time ever fires twice, across restarts. The work
// is created after the claim, through the engine: a command job becomes a
// task (runtime "cron", owner "cron:ID") with idempotency key
// "cron:ID:<scheduled RFC 3339>", so redoing a create after a crash returns
// the same task; a pipeline job becomes a flow managed by the "pipeline"
// controller with state {"file", "args", "cwd": the file's directory},
// which has no idempotency key, so it carries that key as its Origin and a
// redo first looks for a flow of the job's owner with that origin. The
// window left is a crash inside CreateFlow's own commit, which the engine
// makes atomic.
//
// A run is active while its task is active or its flow is not terminal (a
// pipeline waiting at an approval gate holds its job). When it ends, the run
// record gets its status (ok, error, cancelled) and end time, and the job's
// state its last status and error and consecutive failures; after a failure
// a recurring job's next run is the first scheduled time not before the
// failure plus FailureBackoff, and at DisableAfter failures the job is
// disabled with the reason kept for Status. A one-shot job with
// DeleteAfterRun is removed once a run of it succeeds; its history stays,
// found by id. Each job's history keeps the newest HistoryMax (2000) ended
// runs and none older than HistoryAge (7 days); open runs are never pruned.
// Runs and Status read the history and the jobs for the CLI.
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
// last run's.
//
// # Delivery and failure alerts
//
// When a run ends, finish queues its report (Report: the run, and the
// task's result or the pipeline's output) for the job's delivery, and,
// when AlertDue says so, a failure alert for the alert's destination or
// else the delivery, in the same transaction (outbox.go). DeliverOnce,
// called by its own loop beside the scheduling one, sends what is due
// with Deliver: a webhook POST or a notify command. A failed delivery is
// retried with backoff, DeliveryAttempts times in all, then recorded as
// failed; it never fails the run. Each run records its Delivery and Alert
// status and error, and the job its last delivery's.
package scheduler
