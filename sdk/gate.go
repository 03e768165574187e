package sdk

import (
	"encoding/json"
	"time"
)

// Gate kinds: the Kind of a Wait at which a flow stays until someone
// answers. An approval is answered yes or no, an input with a JSON value.
const (
	GateApproval = "approval"
	GateInput    = "input"
)

// DecisionsKey is the top-level key of a flow's state under which the
// gateway records the answers to the flow's gates: an object of Decision
// by the gate's Step. A controller that parks a flow at a gate keeps its
// state a JSON object, leaves this key to the gateway, and reads the
// decision there when the flow resumes (the flow.resumed event carries it
// too, see Resumed).
const DecisionsKey = "decisions"

// IsGate reports whether w is a gate: its kind is approval or input.
func (w Wait) IsGate() bool { return w.Kind == GateApproval || w.Kind == GateInput }

// ParseGate returns the gate a flow's wait describes. ok is false when
// the wait is no gate: absent, JSON null, not an object of Wait's shape,
// or of another kind.
func ParseGate(wait json.RawMessage) (w Wait, ok bool) {
	if len(wait) == 0 || json.Unmarshal(wait, &w) != nil {
		return Wait{}, false
	}
	return w, w.IsGate()
}

// Decision is someone's answer at a gate: Approved for an approval,
// Response for an input, and who answered when. The gateway records it in
// the flow's state (see DecisionsKey) and stamps At with its own clock.
type Decision struct {
	// Approved is true or false at an approval gate, nil at an input.
	Approved *bool `json:"approved,omitempty"`
	// Response is the JSON answer at an input gate, absent at an approval.
	Response json.RawMessage `json:"response,omitempty"`
	// By names who answered; empty when nobody was named.
	By string `json:"by"`
	// At is when the gateway recorded the answer.
	At time.Time `json:"at,omitzero"`
	// Reason, when set, says that the gateway answered on its own and why:
	// ReasonGateExpired. Empty for an answer someone gave.
	Reason string `json:"reason,omitempty"`
}

// ReasonGateExpired is the Reason of the denial the gateway records at a
// gate whose wait has an Until that passed with no answer (a pipeline run
// with --gate-timeout). A controller treats it as any denial.
const ReasonGateExpired = "gate-expired"

// Resumed is the data of a flow.resumed event. Step and Decision are set
// when the flow resumed because someone answered the gate at Step; the
// same decision is already in the flow's state when the event arrives.
type Resumed struct {
	// Status is what the flow resumed as: queued or running.
	Status   FlowStatus `json:"status"`
	Step     string     `json:"step,omitempty"`
	Decision *Decision  `json:"decision,omitempty"`
}
