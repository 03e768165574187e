package engine

import (
	"errors"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// FlowView is a flow with its linked tasks and their summary: what `tasks
// flow show` and `tasks flow list --json` print. The flow's fields are
// inlined in JSON.
type FlowView struct {
	*sdk.Flow
	Tasks       []*stored.Task  `json:"tasks"`
	TaskSummary sdk.TaskSummary `json:"task_summary"`
	// ControllerError is the error the flow's controller last gave for
	// the event at the head of the flow's outbox: a delivery that failed
	// and waits to be retried, or is parked. Empty when none failed.
	ControllerError string `json:"controller_error,omitempty"`
	// ContinuedBy is, for a chain's first run, its continuation's id.
	ContinuedBy string `json:"continued_by,omitempty"`
	// FirstFailure is, for a continuation, why the chain's first run
	// failed.
	FirstFailure string `json:"first_failure,omitempty"`
	// RunUsage sums the usage this run's tasks reported; nil when none
	// did. ChainState is the record of the flow's whole chain: its runs,
	// the usage of every run summed, its budget and stop marks.
	RunUsage   *sdk.Usage `json:"run_usage,omitempty"`
	ChainState *Chain     `json:"chain,omitempty"`
}

// FlowViewPage is one page of flow views, newest first. Damaged lists the
// flow and task records the listing skipped because they cannot be read
// (see DamagedRecord).
type FlowViewPage struct {
	Flows   []FlowView
	Next    string
	Damaged []DamagedRecord
}

// ViewFlow resolves token like ResolveFlow and returns the flow with its
// tasks, read in one snapshot.
func (e *Engine) ViewFlow(token string) (FlowView, error) {
	var v FlowView
	err := e.view(func(tx store.ReadTx) error {
		f, err := resolveFlow(tx, token)
		if err != nil {
			return err
		}
		var bad []DamagedRecord
		if v, bad, err = viewOf(tx, f, e.tasks); err == nil && len(bad) > 0 {
			err = &bad[0]
		}
		return err
	})
	return v, err
}

// ViewFlows is ListFlows with each flow's tasks and summary, read in one
// snapshot.
func (e *Engine) ViewFlows(filter FlowFilter) (FlowViewPage, error) {
	q, err := filter.query()
	if err != nil {
		return FlowViewPage{}, err
	}
	var out FlowViewPage
	err = e.view(func(tx store.ReadTx) error {
		flows, next, bad, err := q.run(tx)
		if err != nil {
			return err
		}
		out = FlowViewPage{Next: next, Flows: make([]FlowView, 0, len(flows)), Damaged: bad}
		for _, f := range flows {
			v, bad, err := viewOf(tx, f, e.tasks)
			if err != nil {
				return err
			}
			out.Flows = append(out.Flows, v)
			out.Damaged = append(out.Damaged, bad...)
		}
		return nil
	})
	return out, err
}

// viewOf returns f with its readable tasks, read through memo, and the
// damaged task records it skipped.
func viewOf(tx store.ReadTx, f *sdk.Flow, memo *taskMemo) (FlowView, []DamagedRecord, error) {
	tasks, bad, err := flowTasksReadable(tx, f.ID, 0, memo)
	if err != nil {
		return FlowView{}, nil, err
	}
	if tasks == nil {
		tasks = []*stored.Task{}
	}
	v := FlowView{Flow: f, Tasks: tasks, TaskSummary: sdk.Summarize(stored.Publics(tasks))}
	for _, task := range tasks {
		v.RunUsage = v.RunUsage.Add(task.Usage)
	}
	head, err := headEvent(tx, f.ID)
	if err != nil {
		return FlowView{}, nil, err
	}
	if head != nil {
		v.ControllerError = head.LastError
	}
	if err := v.addChain(tx); err != nil {
		return FlowView{}, nil, err
	}
	return v, bad, nil
}

// addChain fills in what v's chain says about it.
func (v *FlowView) addChain(tx store.ReadTx) error {
	ch, err := loadChain(tx, v.Chain())
	if err != nil {
		return err
	}
	if ch.Continuation != v.ID {
		v.ContinuedBy = ch.Continuation
	}
	v.ChainState = ch
	if v.SourceFlowID == "" {
		return nil
	}
	src, err := loadFlow(tx, v.SourceFlowID)
	switch {
	case err == nil:
		v.FirstFailure = src.BlockedSummary
	case errors.Is(err, sdk.ErrNotFound) || damaged(err) != nil:
		// a pruned or damaged source leaves the view without it
	default:
		return err
	}
	return nil
}
