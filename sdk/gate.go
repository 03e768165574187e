package sdk

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Gate kinds: the Kind of a Wait at which a flow stays until someone
// answers. An approval is answered yes or no, an input with a JSON value.
const (
	GateApproval = "approval"
	GateInput    = "input"
)

// DecisionsKey is the top-level key of a flow's state under which
// gateways before Flow.Decisions recorded the answers to the flow's
// gates: an object of Decision by the gate's Step. A controller that
// resumes a flow parked by such a gateway may find its answer there.
//
// Deprecated: the gateway records answers in Flow.Decisions and leaves
// the state alone; read them there.
const DecisionsKey = "decisions"

// IsGate reports whether w is a gate: its kind is approval or input.
func (w Wait) IsGate() bool { return w.Kind == GateApproval || w.Kind == GateInput }

// CheckApproval refuses an approval d that the gate's approver rules do
// not accept (InitiatedBy, RequiredApprover, RequireDifferentApprover),
// with an error wrapping ErrInvalid that says who may approve. It takes
// every denial, every answer at a gate that is no approval, and anyone's
// approval at a gate without rules. The messages are the Lobster
// reference's (lobster-format §8.3); By is trimmed as the gateway
// records it.
func (w Wait) CheckApproval(d Decision) error {
	if w.Kind != GateApproval || d.Approved == nil || !*d.Approved || (w.RequiredApprover == "" && !w.RequireDifferentApprover) {
		return nil
	}
	switch who := strings.TrimSpace(d.By); {
	case who == "":
		return fmt.Errorf("%w: Workflow step %s approval requires approver identity; decide with --by NAME", ErrInvalid, w.Step)
	case w.RequiredApprover != "" && who != w.RequiredApprover:
		return fmt.Errorf("%w: Workflow step %s approval requires approver '%s', got '%s'", ErrInvalid, w.Step, w.RequiredApprover, who)
	case w.RequireDifferentApprover && w.InitiatedBy != "" && who == w.InitiatedBy:
		return fmt.Errorf("%w: Workflow step %s approval must be granted by someone other than '%s'", ErrInvalid, w.Step, w.InitiatedBy)
	}
	return nil
}

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
// the flow's Decisions, by the gate's step, and stamps At with its own
// clock.
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
// same decision is already in the flow's Decisions when the event
// arrives.
type Resumed struct {
	// Status is what the flow resumed as: queued or running.
	Status   FlowStatus `json:"status"`
	Step     string     `json:"step,omitempty"`
	Decision *Decision  `json:"decision,omitempty"`
}
