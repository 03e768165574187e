package engine

import (
	"encoding/json"
	"fmt"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// checkResponse refuses, with ErrInvalid, a response to input gate g of
// flow f that fails the gate's schema, naming where and how it fails and
// how to answer again. Approvals, gates without a schema and a schema
// that is no JSON object (the controller's to report) pass.
func checkResponse(f *sdk.Flow, g sdk.Wait, d sdk.Decision) error {
	if g.Kind != sdk.GateInput || len(g.Schema) == 0 {
		return nil
	}
	var schema map[string]any
	if json.Unmarshal(g.Schema, &schema) != nil || schema == nil {
		return nil
	}
	var response any
	_ = json.Unmarshal(d.Response, &response) // checked valid JSON before
	if err := flows.ValidateResponse(g.Step, schema, response); err != nil {
		ref := g.ApprovalID
		if ref == "" {
			ref = f.ID
		}
		return invalid("%v; the gate stays open: answer again with flowgate tasks flow input %s --response-json J", err, ref)
	}
	return nil
}

// checkApproval refuses an approval at gate g of flow f by someone the
// gate's approver rules do not accept (sdk.Wait.CheckApproval), saying
// who may approve and that the gate stays open.
func checkApproval(f *sdk.Flow, g sdk.Wait, d sdk.Decision) error {
	err := g.CheckApproval(d)
	if err == nil {
		return nil
	}
	ref := g.ApprovalID
	if ref == "" {
		ref = f.ID
	}
	return fmt.Errorf("%w; the gate stays open: approve as that person with flowgate tasks flow approve %s --by NAME", err, ref)
}

// recordRefusal appends a gate.refused entry for answer d at gate g of
// flow id, refused with why: the flow's history keeps every answer, the
// refused ones too, while the flow itself does not change.
func (t *txn) recordRefusal(id string, g sdk.Wait, d sdk.Decision, why error) error {
	d.At = t.now
	summary := fmt.Sprintf("%s gate %s answer by %s refused: %s", g.Kind, g.Step, d.By, oneLine(why.Error()))
	return t.recordData(id, HistoryEntry{Kind: HistoryGateRefused, Summary: summary, By: d.By},
		map[string]any{"step": g.Step, "gate": g.Kind, "decision": d, "error": why.Error()})
}
