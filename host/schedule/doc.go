// Package schedule is flowgate's cron time logic: when a job is due, what
// to do about times missed while the host was down, what to do when a run
// comes due while the previous one is still going, and how failures back
// off, alert and disable a job. It is pure: it reads no clock and touches no
// storage, so every function takes the times it needs and every answer is
// a function of its arguments. host/scheduler, the loop that fires jobs,
// keeps the records and asks this package what to do.
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
// # Zones
//
// A Schedule reads its zone from the system's tz database on every call
// unless its Zones field holds a cache. A long-running caller (the
// scheduler) keeps one Zones and sets it on every schedule it computes;
// nothing in the package keeps state of its own.
package schedule
