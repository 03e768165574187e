package runcenter

import (
	"net/http"

	"github.com/flowgate/flowgate/host/api/apitype"
)

// triggerRunsShown is how many recent deliveries the triggers page shows
// a trigger, newest first.
const triggerRunsShown = 10

// triggerRow is a trigger with its newest accepted deliveries.
type triggerRow struct {
	apitype.Trigger
	Runs []apitype.TriggerRun
}

// triggersPage lists every trigger and what it started lately.
func (s *Server) triggersPage(r *http.Request) (string, any, error) {
	ctx := r.Context()
	ts, err := s.cfg.Client.ListTriggers(ctx)
	if err != nil {
		return "", nil, err
	}
	rows := make([]triggerRow, 0, len(ts))
	for _, t := range ts {
		runs, err := s.cfg.Client.TriggerRuns(ctx, t.Name, triggerRunsShown)
		if err != nil {
			return "", nil, err
		}
		rows = append(rows, triggerRow{Trigger: t, Runs: runs})
	}
	return "Triggers", rows, nil
}
