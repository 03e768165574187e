package api

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// The handlers of the cron routes (see NewHandler).

func (s *server) listJobs(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := parseQuery(r, "all")
	if err != nil {
		return 0, nil, err
	}
	var all bool
	if v := q.Get("all"); v != "" {
		if all, err = strconv.ParseBool(v); err != nil {
			return 0, nil, fmt.Errorf("%w: all %q is not true or false", sdk.ErrInvalid, v)
		}
	}
	jobs, err := s.c.ListJobs(r.Context(), all)
	if jobs == nil {
		jobs = []apitype.CronJob{}
	}
	return http.StatusOK, jobListJSON{Jobs: jobs}, err
}

func (s *server) addJob(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in jobInputJSON
	if err := decodeRequest(w, r, &in); err != nil {
		return 0, nil, err
	}
	j, err := s.c.AddJob(r.Context(), in.input())
	return http.StatusCreated, j, err
}

func (s *server) editJob(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var p jobPatchJSON
	if err := decodeRequest(w, r, &p); err != nil {
		return 0, nil, err
	}
	j, err := s.c.EditJob(r.Context(), r.PathValue("ref"), apitype.CronJobPatch(p))
	return http.StatusOK, j, err
}

func (s *server) jobRuns(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := parseQuery(r, "limit")
	if err != nil {
		return 0, nil, err
	}
	limit, err := parseLimit(q.Get("limit"))
	if err != nil {
		return 0, nil, err
	}
	runs, err := s.c.JobRuns(r.Context(), r.PathValue("ref"), limit)
	return http.StatusOK, runListToWire(runs), err
}

func (s *server) runJobNow(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in byRequest
	if err := decodeRequest(w, r, &in); err != nil {
		return 0, nil, err
	}
	run, err := s.c.RunJobNow(r.Context(), r.PathValue("ref"), in.By)
	return http.StatusOK, run, err
}

func (s *server) backfillJob(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in backfillRequest
	if err := decodeRequest(w, r, &in); err != nil {
		return 0, nil, err
	}
	runs, err := s.c.BackfillJob(r.Context(), r.PathValue("ref"), in.options())
	return http.StatusOK, runListToWire(runs), err
}

func (s *server) cronStatus(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if _, err := parseQuery(r); err != nil {
		return 0, nil, err
	}
	st, err := s.c.CronStatus(r.Context())
	if st.Jobs == nil {
		st.Jobs = []apitype.CronJobStatus{}
	}
	return http.StatusOK, st, err
}
