package apitype

import (
	"encoding/json"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// GateFilter selects open gates for OpenGates. The zero value selects
// every one.
type GateFilter struct {
	// ControllerID keeps the gates of this controller's flows.
	ControllerID string
	// Token keeps the gate with this resume token.
	Token string
	// ID keeps the gate with this short approval id, or the gate of the
	// flow with this id.
	ID string
}

// OpenGate is a flow waiting at a gate, as `flowgate approvals` lists it.
type OpenGate struct {
	FlowID string `json:"flow_id"`
	Goal   string `json:"goal"`
	// Since is when the flow last changed: when it stopped at the gate.
	Since time.Time `json:"since"`
	// Gate is the flow's wait as its controller wrote it: an sdk.Wait,
	// with the controller's own fields kept.
	Gate     json.RawMessage `json:"gate"`
	Revision int64           `json:"revision"`
}

// Wait returns the sdk fields of the gate (sdk.ParseGate); the zero Wait
// when Gate does not parse.
func (g OpenGate) Wait() sdk.Wait {
	w, _ := sdk.ParseGate(g.Gate)
	return w
}

// GateDecision is an answer to the gate a flow waits at (DecideGate).
type GateDecision struct {
	// Flow names the flow: its id, else the newest flow of an owner key.
	Flow string
	// Kind is the kind of gate the answer is for, sdk.GateApproval or
	// sdk.GateInput; a flow waiting at the other kind is refused.
	Kind string
	// Expected, if not nil, is the flow revision the caller read: a stale
	// one fails with *sdk.RevisionConflictError. Nil decides at whatever
	// revision the flow has.
	Expected *int64
	// Decision is the answer: Approved at an approval gate, Response (valid
	// JSON) at an input gate.
	Decision sdk.Decision
}
