package cli

import (
	"fmt"

	"github.com/flowgate/flowgate/host/api"
)

// cronJob is a job as cron show and cron list print it in JSON: the
// stored job and the stagger its schedule gets, which is worked out from
// the schedule and the job id rather than stored.
type cronJob struct {
	api.CronJob
	Stagger *jobStagger `json:"stagger,omitempty"`
}

// jobStagger is the stagger a cron schedule gets: the window its fires are
// spread over, the delay this job's id picks within it, and whether the
// window is the default for a top-of-hour schedule.
type jobStagger struct {
	Window  string `json:"window"`
	Offset  string `json:"offset"`
	Default bool   `json:"default,omitempty"`
}

// withStagger pairs j with its stagger; none for a schedule kept exact or
// one that is not staggered.
func withStagger(j api.CronJob) cronJob {
	window, offset := api.CronStagger(j)
	if window == 0 {
		return cronJob{CronJob: j}
	}
	return cronJob{CronJob: j, Stagger: &jobStagger{Window: window.String(), Offset: offset.String(), Default: j.Schedule.Stagger == 0}}
}

// staggerNote is the stagger as a short suffix of the schedule column.
func staggerNote(s *jobStagger) string {
	if s == nil {
		return ""
	}
	return " (+" + s.Offset + ")"
}

// staggerText is the stagger row of cron show.
func staggerText(s *jobStagger) string {
	if s == nil {
		return "none (runs at the times as written)"
	}
	why := "--stagger"
	if s.Default {
		why = "the default for a schedule at minute 0; --exact for none"
	}
	return fmt.Sprintf("%s after each time (this job's offset within %s: %s)", s.Offset, s.Window, why)
}
