package api

import (
	"net/http"

	"github.com/flowgate/flowgate/host/api/apitype"
)

// The handlers of the trigger routes (see NewHandler).

// triggerListJSON is the answer to GET /v1/triggers; Triggers is [] when
// empty.
type triggerListJSON struct {
	Triggers []apitype.Trigger `json:"triggers"`
}

// triggerRunsJSON is the answer to GET /v1/triggers/{name}/runs; Runs is
// [] when empty.
type triggerRunsJSON struct {
	Runs []apitype.TriggerRun `json:"runs"`
}

func (s *server) listTriggers(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if _, err := parseQuery(r); err != nil {
		return 0, nil, err
	}
	ts, err := s.c.ListTriggers(r.Context())
	if ts == nil {
		ts = []apitype.Trigger{}
	}
	return http.StatusOK, triggerListJSON{Triggers: ts}, err
}

func (s *server) addTrigger(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in apitype.TriggerInput
	if err := decodeRequest(w, r, &in); err != nil {
		return 0, nil, err
	}
	t, err := s.c.AddTrigger(r.Context(), in)
	return http.StatusCreated, t, err
}

func (s *server) triggerRuns(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := parseQuery(r, "limit")
	if err != nil {
		return 0, nil, err
	}
	limit, err := parseLimit(q.Get("limit"))
	if err != nil {
		return 0, nil, err
	}
	runs, err := s.c.TriggerRuns(r.Context(), r.PathValue("name"), limit)
	if runs == nil {
		runs = []apitype.TriggerRun{}
	}
	return http.StatusOK, triggerRunsJSON{Runs: runs}, err
}
