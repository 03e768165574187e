package runcenter

import (
	"net/http"
	"time"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
)

// nextRuns is how many upcoming runs the cron page shows a job.
const nextRuns = 3

// jobRow is a cron job with its next runs.
type jobRow struct {
	apitype.CronJobStatus
	Next []time.Time
}

// cronPage lists every cron job, enabled ones first in order of next run.
func (s *Server) cronPage(r *http.Request) (string, any, error) {
	st, err := s.cfg.Client.CronStatus(r.Context())
	if err != nil {
		return "", nil, err
	}
	out := struct {
		Running bool
		Jobs    []jobRow
	}{Running: st.Running}
	for _, j := range st.Jobs {
		row := jobRow{CronJobStatus: j}
		if next := j.Job.State.NextRun; j.Job.Enabled && !next.IsZero() {
			sch := api.CronFireSchedule(j.Job)
			for t := next; !t.IsZero() && len(row.Next) < nextRuns; t = sch.Next(t) {
				row.Next = append(row.Next, t)
			}
		}
		out.Jobs = append(out.Jobs, row)
	}
	return "Cron", out, nil
}

// jobRunsShown is how many runs a job's page shows, newest first.
const jobRunsShown = 50

// jobPage shows a job and its newest runs.
func (s *Server) jobPage(r *http.Request) (string, any, error) {
	ctx := r.Context()
	job, err := s.cfg.Client.GetJob(ctx, r.PathValue("ref"))
	if err != nil {
		return "", nil, err
	}
	runs, err := s.cfg.Client.JobRuns(ctx, job.ID, jobRunsShown)
	if err != nil {
		return "", nil, err
	}
	return "Cron job " + job.Name, struct {
		Job  apitype.CronJob
		Runs []apitype.CronRun
	}{job, runs}, nil
}

// auditPage runs the audit, as `tasks audit` does.
func (s *Server) auditPage(r *http.Request) (string, any, error) {
	rep, err := s.cfg.Client.Audit(r.Context())
	return "Audit", rep, err
}

// pluginsPage lists the controller plugins and their state.
func (s *Server) pluginsPage(r *http.Request) (string, any, error) {
	ps, err := s.cfg.Client.Plugins(r.Context())
	return "Plugins", ps, err
}
