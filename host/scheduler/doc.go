// Package scheduler is the pure core of flowgate's job scheduler: when a job
// is due, what to do about runs missed while the host was down, what to do
// when a run comes due while the previous one is still going, and how
// failures back off, alert and disable a job.
//
// Nothing here reads the clock, sleeps, starts goroutines or touches
// storage. Every function takes the times it needs, so the stateful
// scheduler that arms timers and records runs can be tested with an
// injected clock, and so can this package.
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
// Jobs keeps jobs in a store.Store under "cron/job/ID", with an index
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
// TickOnce does one pass: settle the open runs, start a buffered run whose
// turn has come, then fire each enabled job whose NextRun has passed.
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
package scheduler
