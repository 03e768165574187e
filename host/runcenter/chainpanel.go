package runcenter

import (
	"context"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// chainPanel is what a flow's page says about its chain, from the same
// view `tasks flow show` prints (apitype.FlowView): the chain's runs with
// links, the continuation's receipt (what it reused and reran), the
// chain's first failure, the usage its tasks reported over every run,
// its budget and stop mark, and the diagnoses of this run's tasks.
type chainPanel struct {
	ID   string
	Runs []chainRun
	// Receipt is the chain's continuation's receipt; nil while the chain
	// has one run.
	Receipt      *sdk.Continuation
	FirstFailure string
	// Usage sums every run's reported usage; nil when none was reported.
	Usage     *sdk.Usage
	Budget    *sdk.Budget
	Halted    string
	Diagnosed []*stored.Task
}

// chainRun is one run of a chain.
type chainRun struct {
	ID       string
	Status   sdk.FlowStatus
	Revision int64
	Usage    *sdk.Usage
	// This marks the run whose page it is; Gone a run since pruned.
	This, Gone bool
}

// newChainPanel reads what v's page shows of its chain: nil for a flow
// alone in its chain with no usage, budget or diagnosis worth a panel.
// The chain's other run, if any, is read through the client as `tasks
// flow list --chain` reads it.
func (s *Server) newChainPanel(ctx context.Context, v apitype.FlowView) (*chainPanel, error) {
	p := &chainPanel{ID: v.Chain(), FirstFailure: v.FirstFailure, Usage: v.RunUsage}
	runs := []string{v.ID}
	if ch := v.ChainState; ch != nil {
		if len(ch.Runs) > 0 {
			runs = ch.Runs
		}
		p.Usage, p.Budget, p.Halted = ch.Usage, ch.Budget, api.ChainHalted(ch)
	}
	for _, t := range v.Tasks {
		if t.Diagnosis != nil {
			p.Diagnosed = append(p.Diagnosed, t)
		}
	}
	if len(runs) < 2 && p.Usage == nil && p.Budget == nil && p.Halted == "" && len(p.Diagnosed) == 0 {
		return nil, nil
	}
	views := map[string]apitype.FlowView{v.ID: v}
	if len(runs) > 1 {
		page, err := s.cfg.Client.ViewFlows(ctx, apitype.FlowFilter{ChainID: p.ID})
		if err != nil {
			return nil, err
		}
		for _, o := range page.Flows {
			views[o.ID] = o
		}
	}
	for _, id := range runs {
		r := chainRun{ID: id, This: id == v.ID}
		o, ok := views[id]
		if !ok {
			r.Gone = true
			p.Runs = append(p.Runs, r)
			continue
		}
		r.Status, r.Revision, r.Usage = o.Status, o.Revision, o.RunUsage
		if o.Continuation != nil {
			p.Receipt = o.Continuation
		}
		p.Runs = append(p.Runs, r)
	}
	if first, ok := views[runs[0]]; ok && p.FirstFailure == "" && len(runs) > 1 {
		p.FirstFailure = first.BlockedSummary
	}
	return p, nil
}
