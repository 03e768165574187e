package api

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/scheduler"
)

// Cron is the part of Client that manages scheduled jobs and their runs.
// A job is named by ref: its id, else its name. Invalid input fails with
// a *apitype.FlagError naming the flag at fault (errors.As works on
// Local and Remote alike), a name in use with an error matching
// sdk.ErrInvalid, and a ref that names no job with one matching
// sdk.ErrNotFound.
type Cron interface {
	// AddJob validates in and stores a new job with its first run
	// computed. in.Pipeline must be an absolute path: the gateway does not
	// share the caller's working directory.
	AddJob(ctx context.Context, in apitype.CronJobInput) (apitype.CronJob, error)
	GetJob(ctx context.Context, ref string) (apitype.CronJob, error)
	// ListJobs lists the enabled jobs, or all of them when all is set, in
	// order of next run.
	ListJobs(ctx context.Context, all bool) ([]apitype.CronJob, error)
	// EditJob applies the fields p sets and recomputes the next run.
	EditJob(ctx context.Context, ref string, p apitype.CronJobPatch) (apitype.CronJob, error)
	// SetJobEnabled enables or disables a job; by names who did it, for
	// the job's LastToggle. A job already so is returned unchanged.
	SetJobEnabled(ctx context.Context, ref string, enabled bool, by string) (apitype.CronJob, error)
	// RemoveJob deletes a job and returns it as it was.
	RemoveJob(ctx context.Context, ref string) (apitype.CronJob, error)
	// JobRuns returns up to limit runs of a job, newest first; limit zero
	// means all. The history of a removed job is found by its id.
	JobRuns(ctx context.Context, ref string, limit int) ([]apitype.CronRun, error)
	// CronStatus is the scheduler's view of every job, and whether a
	// gateway's scheduler fires them.
	CronStatus(ctx context.Context) (apitype.CronStatus, error)
	// RunJobNow starts a run of a job at once, under its overlap policy:
	// the run returned is running (with its task or flow id), buffered,
	// skipped, or ended in error. A disabled job is refused. The run's
	// work starts only where a gateway runs. by names who asked, for the
	// run's record.
	RunJobNow(ctx context.Context, ref, by string) (apitype.CronRun, error)
	// BackfillJob runs the scheduled times of a job in (o.From, o.To],
	// oldest first; with o.DryRun it only lists them (status "planned", or
	// the status a time already recorded has).
	BackfillJob(ctx context.Context, ref string, o apitype.BackfillOptions) ([]apitype.CronRun, error)
}

// AddJob stores a new job.
func (l *Local) AddJob(_ context.Context, in apitype.CronJobInput) (apitype.CronJob, error) {
	if err := absolutePipeline(in.Pipeline); err != nil {
		return apitype.CronJob{}, err
	}
	return cronJobOrErr(l.sched.Jobs().Add(cronJobInputOf(in)))
}

// GetJob returns the job with id or name ref.
func (l *Local) GetJob(_ context.Context, ref string) (apitype.CronJob, error) {
	return cronJobOrErr(l.sched.Jobs().Get(ref))
}

// ListJobs lists jobs by next run.
func (l *Local) ListJobs(_ context.Context, all bool) ([]apitype.CronJob, error) {
	jobs, err := l.sched.Jobs().List(all)
	if err != nil {
		return nil, err
	}
	if jobs == nil {
		return []apitype.CronJob{}, nil
	}
	return cronJobsOf(jobs), nil
}

// EditJob changes a job.
func (l *Local) EditJob(_ context.Context, ref string, p apitype.CronJobPatch) (apitype.CronJob, error) {
	if p.Pipeline != nil {
		if err := absolutePipeline(*p.Pipeline); err != nil {
			return apitype.CronJob{}, err
		}
	}
	return cronJobOrErr(l.sched.Jobs().Edit(ref, scheduler.JobPatch(p)))
}

// SetJobEnabled enables or disables a job, recording by as who did it.
func (l *Local) SetJobEnabled(_ context.Context, ref string, enabled bool, by string) (apitype.CronJob, error) {
	return cronJobOrErr(l.sched.Jobs().SetEnabled(ref, enabled, by))
}

// RemoveJob deletes a job.
func (l *Local) RemoveJob(_ context.Context, ref string) (apitype.CronJob, error) {
	return cronJobOrErr(l.sched.Jobs().Remove(ref))
}

// JobRuns returns a job's history, newest first. A ref with no history
// that names no job either is not found.
func (l *Local) JobRuns(_ context.Context, ref string, limit int) ([]apitype.CronRun, error) {
	if err := checkRunsLimit(limit); err != nil {
		return nil, err
	}
	runs, err := l.sched.Runs(ref, limit)
	if err != nil {
		return nil, flagErrorOf(err)
	}
	if len(runs) == 0 {
		if _, err := l.sched.Jobs().Get(ref); err != nil {
			return nil, flagErrorOf(err)
		}
		return []apitype.CronRun{}, nil
	}
	return cronRunsOf(runs), nil
}

// CronStatus reports every job; Running is false, as no gateway serves a
// Local client.
func (l *Local) CronStatus(context.Context) (apitype.CronStatus, error) {
	jobs, err := l.sched.Status()
	if err != nil {
		return apitype.CronStatus{}, err
	}
	out := apitype.CronStatus{Jobs: make([]apitype.CronJobStatus, len(jobs))}
	for i, j := range jobs {
		out.Jobs[i] = cronJobStatusOf(j)
	}
	return out, nil
}

// RunJobNow starts a run of a job at once. Over a store with no gateway,
// the run's task waits in the queue for the next gateway.
func (l *Local) RunJobNow(_ context.Context, ref, by string) (apitype.CronRun, error) {
	r, err := l.sched.RunNow(ref, by)
	if err != nil {
		return apitype.CronRun{}, flagErrorOf(err)
	}
	return cronRunOf(r), nil
}

// BackfillJob runs, or with o.DryRun lists, a job's past scheduled times.
// An unknown o.Overlap is a *apitype.FlagError naming --overlap.
func (l *Local) BackfillJob(_ context.Context, ref string, o apitype.BackfillOptions) ([]apitype.CronRun, error) {
	if o.Overlap != "" {
		if _, err := ParseOverlap(string(o.Overlap)); err != nil {
			return nil, err
		}
	}
	runs, err := l.sched.Backfill(ref, backfillOptionsOf(o))
	if err != nil {
		return nil, flagErrorOf(err)
	}
	if runs == nil {
		return []apitype.CronRun{}, nil
	}
	return cronRunsOf(runs), nil
}

// checkRunsLimit refuses a negative JobRuns limit, naming --limit.
func checkRunsLimit(limit int) error {
	if limit < 0 {
		return &apitype.FlagError{Flag: "--limit", Rule: fmt.Sprintf("must not be negative (got %d)", limit)}
	}
	return nil
}

// absolutePipeline refuses a relative workflow path: it would be read
// from the gateway's working directory, not the caller's.
func absolutePipeline(path string) error {
	if p := strings.TrimSpace(path); p != "" && !filepath.IsAbs(p) {
		return &apitype.FlagError{Flag: "--pipeline", Rule: fmt.Sprintf("%q is a relative path; give the workflow file's absolute path", path)}
	}
	return nil
}
