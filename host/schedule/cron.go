package schedule

import (
	"time"

	"github.com/robfig/cron/v3"
)

// starBit marks a cron field written as "*"; robfig sets it but does not
// export it. It changes how day of month and day of week combine.
const starBit = 1 << 63

// cronYears bounds the search for a matching day, as robfig does.
const cronYears = 5

// nextCron returns the first instant strictly after after that the spec
// names in loc, or zero if none within cronYears.
//
// robfig's own SpecSchedule.Next walks instants and so fires a repeated
// fall-back wall time twice and has no shift policy for gaps. This walks wall
// times instead, day by day, and maps each through resolveWall, which gives
// the first occurrence of a repeated time and applies dst to a skipped one.
// Because that mapping is monotone, the first mapped instant after after is
// the answer, and whole hours and minutes that map to or before after can be
// skipped by looking at their last second.
func nextCron(spec *cron.SpecSchedule, loc *time.Location, dst DSTPolicy, after time.Time) time.Time {
	if spec.Hour&starBit != 0 {
		// A schedule for every hour runs by the hours that actually
		// happen, as Vixie cron does: a repeated fall-back hour runs
		// again, and a skipped spring-forward hour does not occur. That is
		// robfig's own walk over instants.
		return spec.Next(after.In(loc))
	}
	a := after.In(loc)
	day := time.Date(a.Year(), a.Month(), a.Day(), 0, 0, 0, 0, time.UTC)
	limit := day.AddDate(cronYears, 0, 0)
	for ; !day.After(limit); day = day.AddDate(0, 0, 1) {
		if spec.Month&(1<<uint(day.Month())) == 0 || !dayMatches(spec, day) {
			continue
		}
		y, mo, d := day.Date()
		latest := func(h, mi, s int) bool {
			t, _ := resolveWall(y, mo, d, h, mi, s, loc, DSTShift)
			return !t.After(after)
		}
		for h := 0; h < 24; h++ {
			if spec.Hour&(1<<uint(h)) == 0 || latest(h, 59, 59) {
				continue
			}
			for mi := 0; mi < 60; mi++ {
				if spec.Minute&(1<<uint(mi)) == 0 || latest(h, mi, 59) {
					continue
				}
				for s := 0; s < 60; s++ {
					if spec.Second&(1<<uint(s)) == 0 {
						continue
					}
					t, ok := resolveWall(y, mo, d, h, mi, s, loc, dst)
					if ok && t.After(after) {
						return t
					}
				}
			}
		}
	}
	return time.Time{}
}

// dayMatches applies cron's day rule: when either day field is "*", both
// must match; when both are restricted, either may (Vixie cron's OR).
func dayMatches(spec *cron.SpecSchedule, day time.Time) bool {
	domMatch := spec.Dom&(1<<uint(day.Day())) != 0
	dowMatch := spec.Dow&(1<<uint(day.Weekday())) != 0
	if spec.Dom&starBit != 0 || spec.Dow&starBit != 0 {
		return domMatch && dowMatch
	}
	return domMatch || dowMatch
}
