package api

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
)

// Cron is the part of Client that manages scheduled jobs and their runs.
// A job is named by ref: its id, else its name. Invalid input fails with
// a *schedule.FlagError naming the flag at fault (errors.As works on
// Local and Remote alike), a name in use with an error matching
// sdk.ErrInvalid, and a ref that names no job with one matching
// sdk.ErrNotFound.
type Cron interface {
	// AddJob validates in and stores a new job with its first run
	// computed. in.Pipeline must be an absolute path: the gateway does not
	// share the caller's working directory.
	AddJob(ctx context.Context, in scheduler.JobInput) (scheduler.Job, error)
	GetJob(ctx context.Context, ref string) (scheduler.Job, error)
	// ListJobs lists the enabled jobs, or all of them when all is set, in
	// order of next run.
	ListJobs(ctx context.Context, all bool) ([]scheduler.Job, error)
	// EditJob applies the fields p sets and recomputes the next run.
	EditJob(ctx context.Context, ref string, p scheduler.JobPatch) (scheduler.Job, error)
	// SetJobEnabled enables or disables a job; by names who did it, for
	// the job's LastToggle. A job already so is returned unchanged.
	SetJobEnabled(ctx context.Context, ref string, enabled bool, by string) (scheduler.Job, error)
	// RemoveJob deletes a job and returns it as it was.
	RemoveJob(ctx context.Context, ref string) (scheduler.Job, error)
	// JobRuns returns up to limit runs of a job, newest first; limit zero
	// means all. The history of a removed job is found by its id.
	JobRuns(ctx context.Context, ref string, limit int) ([]scheduler.Run, error)
	// CronStatus is the scheduler's view of every job, and whether a
	// gateway's scheduler fires them.
	CronStatus(ctx context.Context) (CronStatus, error)
	// RunJobNow starts a run of a job at once, under its overlap policy:
	// the run returned is running (with its task or flow id), buffered,
	// skipped, or ended in error. A disabled job is refused. The run's
	// work starts only where a gateway runs. by names who asked, for the
	// run's record.
	RunJobNow(ctx context.Context, ref, by string) (scheduler.Run, error)
	// BackfillJob runs the scheduled times of a job in (o.From, o.To],
	// oldest first; with o.DryRun it only lists them (status "planned", or
	// the status a time already recorded has).
	BackfillJob(ctx context.Context, ref string, o scheduler.BackfillOptions) ([]scheduler.Run, error)
}

// CronStatus is what `flowgate cron status` prints.
type CronStatus struct {
	// Running is true when a gateway serves the home, so its scheduler
	// fires the jobs that come due. With no gateway nothing fires.
	Running bool `json:"running"`
	// Jobs is every job, enabled ones first in order of next run; [] when
	// there are none.
	Jobs []scheduler.JobStatus `json:"jobs"`
}

// AddJob stores a new job.
func (l *Local) AddJob(_ context.Context, in scheduler.JobInput) (scheduler.Job, error) {
	if err := absolutePipeline(in.Pipeline); err != nil {
		return scheduler.Job{}, err
	}
	return l.sched.Jobs().Add(in)
}

// GetJob returns the job with id or name ref.
func (l *Local) GetJob(_ context.Context, ref string) (scheduler.Job, error) {
	return l.sched.Jobs().Get(ref)
}

// ListJobs lists jobs by next run.
func (l *Local) ListJobs(_ context.Context, all bool) ([]scheduler.Job, error) {
	jobs, err := l.sched.Jobs().List(all)
	if jobs == nil && err == nil {
		jobs = []scheduler.Job{}
	}
	return jobs, err
}

// EditJob changes a job.
func (l *Local) EditJob(_ context.Context, ref string, p scheduler.JobPatch) (scheduler.Job, error) {
	if p.Pipeline != nil {
		if err := absolutePipeline(*p.Pipeline); err != nil {
			return scheduler.Job{}, err
		}
	}
	return l.sched.Jobs().Edit(ref, p)
}

// SetJobEnabled enables or disables a job, recording by as who did it.
func (l *Local) SetJobEnabled(_ context.Context, ref string, enabled bool, by string) (scheduler.Job, error) {
	return l.sched.Jobs().SetEnabled(ref, enabled, by)
}

// RemoveJob deletes a job.
func (l *Local) RemoveJob(_ context.Context, ref string) (scheduler.Job, error) {
	return l.sched.Jobs().Remove(ref)
}

// JobRuns returns a job's history, newest first. A ref with no history
// that names no job either is not found.
func (l *Local) JobRuns(_ context.Context, ref string, limit int) ([]scheduler.Run, error) {
	if err := checkRunsLimit(limit); err != nil {
		return nil, err
	}
	runs, err := l.sched.Runs(ref, limit)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		if _, err := l.sched.Jobs().Get(ref); err != nil {
			return nil, err
		}
		runs = []scheduler.Run{}
	}
	return runs, nil
}

// CronStatus reports every job; Running is false, as no gateway serves a
// Local client.
func (l *Local) CronStatus(context.Context) (CronStatus, error) {
	jobs, err := l.sched.Status()
	if err != nil {
		return CronStatus{}, err
	}
	if jobs == nil {
		jobs = []scheduler.JobStatus{}
	}
	return CronStatus{Jobs: jobs}, nil
}

// RunJobNow starts a run of a job at once. Over a store with no gateway,
// the run's task waits in the queue for the next gateway.
func (l *Local) RunJobNow(_ context.Context, ref, by string) (scheduler.Run, error) {
	return l.sched.RunNow(ref, by)
}

// BackfillJob runs, or with o.DryRun lists, a job's past scheduled times.
// An unknown o.Overlap is a *schedule.FlagError naming --overlap.
func (l *Local) BackfillJob(_ context.Context, ref string, o scheduler.BackfillOptions) ([]scheduler.Run, error) {
	if o.Overlap != "" {
		if _, err := schedule.ParseOverlap(string(o.Overlap)); err != nil {
			return nil, err
		}
	}
	runs, err := l.sched.Backfill(ref, o)
	if runs == nil && err == nil {
		runs = []scheduler.Run{}
	}
	return runs, err
}

// checkRunsLimit refuses a negative JobRuns limit, naming --limit.
func checkRunsLimit(limit int) error {
	if limit < 0 {
		return &schedule.FlagError{Flag: "--limit", Rule: fmt.Sprintf("must not be negative (got %d)", limit)}
	}
	return nil
}

// absolutePipeline refuses a relative workflow path: it would be read
// from the gateway's working directory, not the caller's.
func absolutePipeline(path string) error {
	if p := strings.TrimSpace(path); p != "" && !filepath.IsAbs(p) {
		return &schedule.FlagError{Flag: "--pipeline", Rule: fmt.Sprintf("%q is a relative path; give the workflow file's absolute path", path)}
	}
	return nil
}
