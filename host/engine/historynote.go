package engine

import (
	"fmt"

	"github.com/flowgate/flowgate/sdk"
)

// CancelByOperator is who a flow's history names as the author of a
// cancel made with CancelFlow when the caller names nobody; a
// controller's RequestCancel is by "controller <id>".
const CancelByOperator = "operator"

// explainDecision makes the write of flow id that decision d at gate g
// resumes a gate.answered entry naming who answered, and with what.
func (t *txn) explainDecision(id string, g sdk.Wait, d sdk.Decision) {
	answer := "answered"
	switch {
	case d.Approved != nil && *d.Approved:
		answer = "approved"
	case d.Approved != nil:
		answer = "denied"
	}
	summary := fmt.Sprintf("%s gate %s %s by %s", g.Kind, g.Step, answer, d.By)
	if d.Reason != "" {
		summary += " (" + d.Reason + ")"
	}
	t.explain(id, historyNote{Kind: HistoryGateAnswered, Summary: summary, By: d.By,
		Data: map[string]any{"step": g.Step, "gate": g.Kind, "decision": d}})
}

// recordDeliveryFailure appends a controller.error entry for a failed
// delivery of ev (already updated with the failure) when the failure is
// the controller's: counted is false for a controller that was merely
// starting or restarting, which the event's retry covers.
func (t *txn) recordDeliveryFailure(ev *sdk.Event, counted bool) error {
	if !counted {
		return nil
	}
	summary := fmt.Sprintf("delivering %s #%d failed: %s", ev.Type, ev.Seq, oneLine(ev.LastError))
	if ev.Parked {
		summary += "; delivery parked"
	}
	return t.recordData(ev.FlowID, HistoryEntry{Kind: HistoryControllerError, Summary: summary, TaskID: ev.TaskID},
		map[string]any{"event_seq": ev.Seq, "event_type": ev.Type, "deliveries": ev.Deliveries,
			"parked": ev.Parked, "retry_at": ev.RetryAt, "error": ev.LastError})
}

// recordContinued appends a continued entry to the source of
// continuation f, naming by (empty: CancelByOperator) as who asked.
func (t *txn) recordContinued(f *sdk.Flow, by string) error {
	if by == "" {
		by = CancelByOperator
	}
	data := map[string]any{"successor_id": f.ID}
	summary := "continued as flow " + f.ID
	if c := f.Continuation; c != nil {
		data["reason"], data["rerun"], data["reuse"] = c.Reason, c.Rerun, c.Reuse
		summary += ": " + oneLine(c.Reason)
	}
	return t.recordData(f.SourceFlowID, HistoryEntry{Kind: HistoryContinued, Summary: summary, By: by}, data)
}
