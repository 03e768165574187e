package runcenter

import (
	"fmt"
	"net/http"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// PageSize is how many flows the flow list shows at once; the list pages
// through the store's index and never reads more.
const PageSize = 50

// ScanPerPage is how many flows one page of the flow list examines at
// most, unless Config.FlowScan says otherwise. A filter that matches few flows (a rare search word) ends the page
// there, with a "Search older" link from where it stopped, instead of
// reading the whole store for one page.
const ScanPerPage = 5000

// flowsPage is the data of the flow list.
type flowsPage struct {
	Pressure string
	Filter   flowFilter
	Statuses []string
	// Rows are the page's flows, the runs of one cron job folded into
	// one row unless Filter.AllRuns.
	Rows []flowRow
	// Newer is the link to the first page when this is not it; Older the
	// link to the next page, when there is one. Bounded is set when the
	// page stopped at ScanPerPage flows before it was full: Older then
	// searches on from there. Scan is how many flows a page examines.
	Newer, Older string
	Bounded      bool
	Scan         int
	// Runs is the link that shows every run, or folds them again.
	Runs string
}

// flowsPage reads one page of flows, newest first, that the query's
// filters select, after the flow id the after parameter names, and the
// counts of the pressure line (kept between pages, see flowCounts).
func (s *Server) flowsPage(r *http.Request) (string, any, error) {
	q := r.URL.Query()
	ff := filterOf(q)
	f, err := ff.engineFilter()
	if err != nil {
		return "", nil, err
	}
	f.After, f.Scan = q.Get("after"), s.cfg.FlowScan
	ctx := r.Context()
	if f.OwnerKey, err = api.FlowOwner(ctx, s.cfg.Client, ff.Owner, ff.Cron, ff.Trigger); err != nil {
		return "", nil, err
	}
	page, err := s.cfg.Client.ViewFlows(ctx, f)
	if err != nil {
		return "", nil, err
	}
	counts, err := s.countFlows(ctx)
	if err != nil {
		return "", nil, err
	}
	out := flowsPage{Filter: ff, Rows: rowsOf(page.Flows, ff.folds()), Pressure: pressure(counts), Scan: f.Scan}
	for _, st := range sdk.FlowStatuses() {
		out.Statuses = append(out.Statuses, string(st))
	}
	if f.After != "" {
		out.Newer = ff.query("")
	}
	if page.Next != "" {
		out.Older = ff.query(page.Next)
		out.Bounded = len(page.Flows) < PageSize
	}
	if ff.Cron == "" {
		runs := ff
		runs.AllRuns = !ff.AllRuns
		out.Runs = runs.query(f.After)
	}
	return "Flows", out, nil
}

// pressure is the CLI's pressure line: what is active, blocked and asked
// to stop, of how many flows.
func pressure(c apitype.FlowCounts) string {
	return fmt.Sprintf("%d active · %d waiting · %d blocked · %d cancel-requested · %d total",
		c.ByStatus[sdk.FlowQueued]+c.ByStatus[sdk.FlowRunning], c.ByStatus[sdk.FlowWaiting], c.ByStatus[sdk.FlowBlocked],
		c.CancelRequested, c.Total)
}
