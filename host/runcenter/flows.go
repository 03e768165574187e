package runcenter

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// PageSize is how many flows the flow list shows at once; the list pages
// through the store's index and never reads more.
const PageSize = 50

// flowsPage is the data of the flow list.
type flowsPage struct {
	Pressure string
	Filter   flowFilter
	Statuses []string
	Flows    []engine.FlowView
	// Newer is the link to the first page when this is not it; Older the
	// link to the next page, when there is one.
	Newer, Older string
}

// flowFilter is the list's filter as the form sends it.
type flowFilter struct {
	Status, Controller, Owner, Chain string
}

// query is the filter's query string, with after when set.
func (f flowFilter) query(after string) string {
	q := url.Values{}
	for k, v := range map[string]string{"status": f.Status, "controller": f.Controller, "owner": f.Owner, "chain": f.Chain, "after": after} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return "/?" + q.Encode()
}

// flowsPage reads one page of flows, newest first, that the query's
// filters select, after the flow id the after parameter names, and the
// counts of the pressure line.
func (s *Server) flowsPage(r *http.Request) (string, any, error) {
	q := r.URL.Query()
	ff := flowFilter{Status: q.Get("status"), Controller: q.Get("controller"), Owner: q.Get("owner"), Chain: q.Get("chain")}
	f := engine.FlowFilter{ControllerID: ff.Controller, OwnerKey: ff.Owner, ChainID: ff.Chain, After: q.Get("after"), Limit: PageSize}
	if ff.Status != "" {
		st, err := sdk.ParseFlowStatus(ff.Status)
		if err != nil {
			return "", nil, err
		}
		f.Status = st
	}
	ctx := r.Context()
	page, err := s.cfg.Client.ViewFlows(ctx, f)
	if err != nil {
		return "", nil, err
	}
	counts, err := s.cfg.Client.CountFlows(ctx)
	if err != nil {
		return "", nil, err
	}
	out := flowsPage{Filter: ff, Flows: page.Flows, Pressure: pressure(counts)}
	for _, st := range sdk.FlowStatuses() {
		out.Statuses = append(out.Statuses, string(st))
	}
	if f.After != "" {
		out.Newer = ff.query("")
	}
	if page.Next != "" {
		out.Older = ff.query(page.Next)
	}
	return "Flows", out, nil
}

// pressure is the CLI's pressure line: what is active, blocked and asked
// to stop, of how many flows.
func pressure(c engine.FlowCounts) string {
	return fmt.Sprintf("%d active · %d waiting · %d blocked · %d cancel-requested · %d total",
		c.ByStatus[sdk.FlowQueued]+c.ByStatus[sdk.FlowRunning], c.ByStatus[sdk.FlowWaiting], c.ByStatus[sdk.FlowBlocked],
		c.CancelRequested, c.Total)
}
