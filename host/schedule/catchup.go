package schedule

import "time"

// PlanCatchUp decides what to do about the times s was due in
// (lastScheduled, now] while nothing ran them: after downtime, a suspend, or
// a clock jump. lastScheduled is the last scheduled time already handled
// (run or recorded); nothing at or before it is returned, so a restart never
// fires a time twice.
//
// With window zero the latest due time runs once and the older ones are
// missed. With a positive window every due time within window of now runs,
// oldest first, and the older ones are missed. run and missed are disjoint
// and both oldest first; missed times are for the run history, not for
// running. Each list holds at most MaxTimes times (the oldest ones) and both
// are empty if s is invalid.
func PlanCatchUp(s Schedule, lastScheduled, now time.Time, window time.Duration) (run, missed []time.Time) {
	c, err := s.compile()
	if err != nil || !now.After(lastScheduled) {
		return nil, nil
	}
	if window <= 0 {
		due, _ := c.between(lastScheduled, now, MaxTimes)
		if len(due) == 0 {
			return nil, nil
		}
		latest := latestDue(c, lastScheduled, now, due)
		if last := len(due) - 1; due[last].Equal(latest) {
			due = due[:last] // latest is in due unless due was cut at MaxTimes
		}
		return []time.Time{latest}, due
	}
	cut := now.Add(-window)
	if cut.Before(lastScheduled) {
		cut = lastScheduled
	}
	missed, _ = c.between(lastScheduled, cut, MaxTimes)
	run, _ = c.between(cut, now, MaxTimes)
	return run, missed
}

// latestDue returns the last time due in (from, now]. due is the start of
// that list, which may have been cut at MaxTimes; then the latest is found by
// stepping from the end of due.
func latestDue(c compiled, from, now time.Time, due []time.Time) time.Time {
	latest := due[len(due)-1]
	if len(due) < MaxTimes {
		return latest
	}
	for t := c.next(latest); !t.IsZero() && !t.After(now); t = c.next(t) {
		latest = t
	}
	return latest.In(from.Location())
}
