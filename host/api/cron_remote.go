package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/flowgate/flowgate/host/scheduler"
)

// AddJob stores a new job in the gateway.
func (c *Remote) AddJob(ctx context.Context, in scheduler.JobInput) (scheduler.Job, error) {
	var out scheduler.Job
	if err := c.call(ctx, http.MethodPost, "/v1/cron/jobs", nil, jobInputToWire(in), &out); err != nil {
		return scheduler.Job{}, err
	}
	return out, nil
}

// GetJob returns the job with id or name ref.
func (c *Remote) GetJob(ctx context.Context, ref string) (scheduler.Job, error) {
	var out scheduler.Job
	if err := c.call(ctx, http.MethodGet, "/v1/cron/jobs/"+pathSegment(ref), nil, nil, &out); err != nil {
		return scheduler.Job{}, err
	}
	return out, nil
}

// ListJobs lists the enabled jobs, or all when all is set, by next run.
// An empty list is empty and non-nil.
func (c *Remote) ListJobs(ctx context.Context, all bool) ([]scheduler.Job, error) {
	q := url.Values{}
	if all {
		q.Set("all", "true")
	}
	var out jobListJSON
	if err := c.call(ctx, http.MethodGet, "/v1/cron/jobs", q, nil, &out); err != nil {
		return nil, err
	}
	if out.Jobs == nil {
		out.Jobs = []scheduler.Job{}
	}
	return out.Jobs, nil
}

// EditJob sends the fields p sets; the rest of the job stays as it is.
func (c *Remote) EditJob(ctx context.Context, ref string, p scheduler.JobPatch) (scheduler.Job, error) {
	return c.jobCall(ctx, ref, "edit", jobPatchJSON(p))
}

// SetJobEnabled enables or disables a job, recording by as who did it.
func (c *Remote) SetJobEnabled(ctx context.Context, ref string, enabled bool, by string) (scheduler.Job, error) {
	verb := "disable"
	if enabled {
		verb = "enable"
	}
	return c.jobCall(ctx, ref, verb, byRequest{By: by})
}

// RemoveJob deletes a job and returns it as it was.
func (c *Remote) RemoveJob(ctx context.Context, ref string) (scheduler.Job, error) {
	return c.jobCall(ctx, ref, "remove", nil)
}

// JobRuns returns up to limit runs of a job, newest first (zero: all).
func (c *Remote) JobRuns(ctx context.Context, ref string, limit int) ([]scheduler.Run, error) {
	if ref == "" {
		return nil, emptyRef()
	}
	if err := checkRunsLimit(limit); err != nil {
		return nil, err
	}
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out runListJSON
	if err := c.call(ctx, http.MethodGet, "/v1/cron/jobs/"+pathSegment(ref)+"/runs", q, nil, &out); err != nil {
		return nil, err
	}
	return runListToWire(out.Runs).Runs, nil
}

// CronStatus is the gateway scheduler's view of every job.
func (c *Remote) CronStatus(ctx context.Context) (CronStatus, error) {
	var out CronStatus
	if err := c.call(ctx, http.MethodGet, "/v1/cron/status", nil, nil, &out); err != nil {
		return CronStatus{}, err
	}
	if out.Jobs == nil {
		out.Jobs = []scheduler.JobStatus{}
	}
	return out, nil
}

// RunJobNow has the gateway's scheduler start a run of a job at once.
func (c *Remote) RunJobNow(ctx context.Context, ref, by string) (scheduler.Run, error) {
	if ref == "" {
		return scheduler.Run{}, emptyRef()
	}
	var out scheduler.Run
	if err := c.call(ctx, http.MethodPost, "/v1/cron/jobs/"+pathSegment(ref)+"/run", nil, byRequest{By: by}, &out); err != nil {
		return scheduler.Run{}, err
	}
	return out, nil
}

// BackfillJob has the gateway's scheduler run, or list, a job's past
// scheduled times.
func (c *Remote) BackfillJob(ctx context.Context, ref string, o scheduler.BackfillOptions) ([]scheduler.Run, error) {
	if ref == "" {
		return nil, emptyRef()
	}
	var out runListJSON
	if err := c.call(ctx, http.MethodPost, "/v1/cron/jobs/"+pathSegment(ref)+"/backfill", nil, backfillToWire(o), &out); err != nil {
		return nil, err
	}
	return runListToWire(out.Runs).Runs, nil
}

// jobCall posts body (nil: none) to the route verb of job ref and decodes
// the job it answers with.
func (c *Remote) jobCall(ctx context.Context, ref, verb string, body any) (scheduler.Job, error) {
	if ref == "" {
		return scheduler.Job{}, emptyRef()
	}
	var out scheduler.Job
	if err := c.call(ctx, http.MethodPost, "/v1/cron/jobs/"+pathSegment(ref)+"/"+verb, nil, body, &out); err != nil {
		return scheduler.Job{}, err
	}
	return out, nil
}

// emptyRef is the refusal for an empty job ref in a path, which HTTP
// cannot carry: the scheduler finds no job by that ref either.
func emptyRef() error {
	return fmt.Errorf("%w: no job has id or name %q; see cron list --all", scheduler.ErrJobNotFound, "")
}
