package runcenter

import (
	"cmp"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
)

// scheduleText says when a cron job fires, in the terms of its flags: a
// cron expression with the zone it is read in (--tz, else UTC), the
// interval of an --every job, or the instant of an --at job; and the
// stagger offset its id picks, when it has one, since that is how far
// after the written time it really fires.
func scheduleText(j apitype.CronJob) string {
	s := j.Schedule
	var text string
	switch s.Kind {
	case apitype.ScheduleEvery:
		text = "every " + shortDuration(time.Duration(s.Every))
	case apitype.ScheduleAt:
		text = "at " + s.At.UTC().Format("2006-01-02 15:04:05") + " UTC"
	default:
		text = s.Expr + " in " + cmp.Or(s.TZ, "UTC")
	}
	if _, off := api.CronFireSchedule(j).Window(); off > 0 {
		text += ", staggered " + shortDuration(off) + " later"
	}
	return text
}

// shortDuration writes d as time.Duration does, without the zero minutes
// and seconds that make "15m0s" of 15m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
