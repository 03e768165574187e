package runcenter

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
)

// FlowPath is the path of flow id's page, for links to it from outside
// the run center (a notice's url, under http.public_url).
func FlowPath(id string) string { return "/flows/" + url.PathEscape(id) }

// historyPageSize is how many history entries a flow's page shows at
// once; "more" pages on.
const historyPageSize = 500

// flowPage is the data of a flow's page.
type flowPage struct {
	Flow      *sdk.Flow
	View      apitype.FlowView
	Tasks     []taskRow
	Steps     []stepRow
	Gate      *gateForm
	Chain     *chainPanel
	ActionSet flowActions
	History   []apitype.HistoryEntry
	// HistoryNext is the seq to page on from when the page is full;
	// Dropped counts entries the history's bound dropped.
	HistoryNext int64
	Dropped     int64
	streamURL   string
}

func (p flowPage) stream() string { return p.streamURL }

// SummaryLabel names the flow's summary (sdk.Flow.BlockedSummary, which
// every controller fills for any end) by what happened: a failed flow's
// summary is why it failed, not why it is blocked.
func (p flowPage) SummaryLabel() string {
	switch p.Flow.Status {
	case sdk.FlowBlocked:
		return "Blocked"
	case sdk.FlowFailed:
		return "Failed because"
	case sdk.FlowPartial:
		return "Partly failed because"
	case sdk.FlowCancelled:
		return "Cancelled because"
	case sdk.FlowLost:
		return "Lost because"
	}
	return "Summary"
}

// taskRow is a task on the timeline, with its progress as a percentage.
type taskRow struct {
	*stored.Task
	// Pct is the progress in percent; -1 when the task reported none.
	Pct      int
	Progress string
}

// stepRow is a pipeline step and how far it got.
type stepRow struct {
	ID, Status string
}

// flowPage reads a flow with its tasks, its plan's steps, its gate and
// one page of its history, after the seq the hafter parameter names.
func (s *Server) flowPage(r *http.Request) (string, any, error) {
	ctx := r.Context()
	v, err := s.cfg.Client.ViewFlow(ctx, r.PathValue("id"))
	if err != nil {
		return "", nil, err
	}
	var after int64
	if h := r.URL.Query().Get("hafter"); h != "" {
		if after, err = strconv.ParseInt(h, 10, 64); err != nil || after < 0 {
			return "", nil, fmt.Errorf("%w: hafter %q is not a history seq", sdk.ErrInvalid, h)
		}
	}
	hist, err := s.cfg.Client.History(ctx, v.ID, after, historyPageSize)
	if err != nil {
		return "", nil, err
	}
	p := flowPage{Flow: v.Flow, View: v, History: hist.Entries, Dropped: hist.Dropped, Steps: steps(v.Flow),
		ActionSet: actionsOf(v)}
	for _, t := range v.Tasks {
		p.Tasks = append(p.Tasks, newTaskRow(t))
	}
	if p.Chain, err = s.newChainPanel(ctx, v); err != nil {
		return "", nil, err
	}
	if g, ok := sdk.ParseGate(v.Wait); ok && v.Status == sdk.FlowWaiting {
		p.Gate = newGateForm(v.ID, v.Revision, g, r.URL.Path)
	}
	if len(hist.Entries) == historyPageSize {
		p.HistoryNext = hist.Next
	} else if !hist.Status.Terminal() {
		p.streamURL = "/v1/flows/" + url.PathEscape(v.ID) + "/history/stream"
	}
	return "Flow " + v.ID, p, nil
}

func newTaskRow(t *stored.Task) taskRow {
	row := taskRow{Task: t, Pct: -1}
	if p := t.Progress; p != nil {
		if p.Fraction != nil {
			row.Pct = int(*p.Fraction*100 + 0.5)
		}
		row.Progress = strings.TrimSpace(p.Phase + " " + p.Message)
	}
	if t.Status == sdk.TaskSucceeded {
		row.Pct = 100
	}
	return row
}

// steps lists the nodes of the plan a flow's controller keeps in its
// state (sdk.PlanKey), each with where it stands (nodePhase); nil for a
// flow without a plan.
func steps(f *sdk.Flow) []stepRow {
	plan, err := flowrule.PlanOf(f)
	if err != nil {
		return nil
	}
	out := make([]stepRow, 0, len(plan.Nodes))
	for _, n := range plan.Nodes {
		out = append(out, stepRow{ID: n.ID, Status: string(nodePhase(f, n))})
	}
	return out
}
