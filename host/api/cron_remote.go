package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/scheduler"
)

// AddJob stores a new job in the gateway.
func (c *Remote) AddJob(ctx context.Context, in apitype.CronJobInput) (apitype.CronJob, error) {
	var out apitype.CronJob
	if err := c.call(ctx, http.MethodPost, "/v1/cron/jobs", nil, jobInputToWire(in), &out); err != nil {
		return apitype.CronJob{}, err
	}
	return out, nil
}

// GetJob returns the job with id or name ref.
func (c *Remote) GetJob(ctx context.Context, ref string) (apitype.CronJob, error) {
	var out apitype.CronJob
	if err := c.call(ctx, http.MethodGet, "/v1/cron/jobs/"+pathSegment(ref), nil, nil, &out); err != nil {
		return apitype.CronJob{}, err
	}
	return out, nil
}

// ListJobs lists the enabled jobs, or all when all is set, by next run.
// An empty list is empty and non-nil.
func (c *Remote) ListJobs(ctx context.Context, all bool) ([]apitype.CronJob, error) {
	q := url.Values{}
	if all {
		q.Set("all", "true")
	}
	var out jobListJSON
	if err := c.call(ctx, http.MethodGet, "/v1/cron/jobs", q, nil, &out); err != nil {
		return nil, err
	}
	if out.Jobs == nil {
		out.Jobs = []apitype.CronJob{}
	}
	return out.Jobs, nil
}

// EditJob sends the fields p sets; the rest of the job stays as it is.
func (c *Remote) EditJob(ctx context.Context, ref string, p apitype.CronJobPatch) (apitype.CronJob, error) {
	return c.jobCall(ctx, ref, "edit", jobPatchJSON(p))
}

// SetJobEnabled enables or disables a job, recording by as who did it.
func (c *Remote) SetJobEnabled(ctx context.Context, ref string, enabled bool, by string) (apitype.CronJob, error) {
	verb := "disable"
	if enabled {
		verb = "enable"
	}
	return c.jobCall(ctx, ref, verb, byRequest{By: by})
}

// RemoveJob deletes a job and returns it as it was.
func (c *Remote) RemoveJob(ctx context.Context, ref string) (apitype.CronJob, error) {
	return c.jobCall(ctx, ref, "remove", nil)
}

// JobRuns returns up to limit runs of a job, newest first (zero: all).
func (c *Remote) JobRuns(ctx context.Context, ref string, limit int) ([]apitype.CronRun, error) {
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
func (c *Remote) CronStatus(ctx context.Context) (apitype.CronStatus, error) {
	var out apitype.CronStatus
	if err := c.call(ctx, http.MethodGet, "/v1/cron/status", nil, nil, &out); err != nil {
		return apitype.CronStatus{}, err
	}
	if out.Jobs == nil {
		out.Jobs = []apitype.CronJobStatus{}
	}
	return out, nil
}

// RunJobNow has the gateway's scheduler start a run of a job at once.
func (c *Remote) RunJobNow(ctx context.Context, ref, by string) (apitype.CronRun, error) {
	if ref == "" {
		return apitype.CronRun{}, emptyRef()
	}
	var out apitype.CronRun
	if err := c.call(ctx, http.MethodPost, "/v1/cron/jobs/"+pathSegment(ref)+"/run", nil, byRequest{By: by}, &out); err != nil {
		return apitype.CronRun{}, err
	}
	return out, nil
}

// BackfillJob has the gateway's scheduler run, or list, a job's past
// scheduled times.
func (c *Remote) BackfillJob(ctx context.Context, ref string, o apitype.BackfillOptions) ([]apitype.CronRun, error) {
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
func (c *Remote) jobCall(ctx context.Context, ref, verb string, body any) (apitype.CronJob, error) {
	if ref == "" {
		return apitype.CronJob{}, emptyRef()
	}
	var out apitype.CronJob
	if err := c.call(ctx, http.MethodPost, "/v1/cron/jobs/"+pathSegment(ref)+"/"+verb, nil, body, &out); err != nil {
		return apitype.CronJob{}, err
	}
	return out, nil
}

// emptyRef is the refusal for an empty job ref in a path, which HTTP
// cannot carry: the scheduler finds no job by that ref either.
func emptyRef() error {
	return fmt.Errorf("%w: no job has id or name %q; see cron list --all", scheduler.ErrJobNotFound, "")
}
