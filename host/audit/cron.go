package audit

import (
	"fmt"

	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
)

// auditJobs reports each cron job that keeps failing
// (cron_job_failing): an enabled job whose last Config.JobFailures runs
// or more failed in a row, as a warning, since a schedule that fails
// every time fails quietly unless someone reads its runs; and a job the
// scheduler disabled for failing (schedule.DisableAfter in a row), as
// an error, since it no longer runs at all. The finding goes as soon as
// a run succeeds, which resets the count.
func (a *auditor) auditJobs() error {
	jobs, err := scheduler.NewJobs(a.eng, scheduler.JobsConfig{}).List(true)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		n := j.State.ConsecutiveErrors
		f := Finding{Kind: KindFlow, Severity: Warn, Code: JobFailing, Token: j.ID, Status: j.State.LastStatus}
		switch {
		case j.Enabled && n >= a.cfg.JobFailures:
			f.Detail = fmt.Sprintf("cron job %q failed its last %d runs in a row; last error: %s", j.Name, n, orNone(j.State.LastError))
		case !j.Enabled && n >= schedule.DisableAfter:
			f.Severity = Error
			f.Detail = fmt.Sprintf("cron job %q was disabled after failing %d runs in a row and no longer runs; last error: %s", j.Name, n, orNone(j.State.LastError))
		default:
			continue
		}
		if !j.State.LastRun.IsZero() {
			f.AgeMS = ageSince(a.now, j.State.LastRun)
		}
		a.out = append(a.out, f)
	}
	return nil
}
