package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

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
	// JSON) at an input gate. Its At is set to the engine's clock.
	Decision sdk.Decision
}

// check refuses an answer that cannot be right for any flow.
func (in *GateDecision) check() error {
	d := &in.Decision
	d.By = strings.TrimSpace(d.By)
	switch in.Kind {
	case sdk.GateApproval:
		if d.Approved == nil || d.Response != nil {
			return invalid("an approval gate is answered with approved true or false and no response")
		}
	case sdk.GateInput:
		if d.Approved != nil || len(d.Response) == 0 {
			return invalid("an input gate is answered with a JSON response and no approved")
		}
		if err := checkJSON("the response to an input gate", d.Response); err != nil {
			return err
		}
	default:
		return invalid("gate kind %q is not one a decision answers (want %s or %s)", in.Kind, sdk.GateApproval, sdk.GateInput)
	}
	if in.Expected != nil {
		return checkExpected(*in.Expected)
	}
	return nil
}

// DecideGate records in.Decision at the gate the flow waits at and
// resumes the flow as running, in one transaction: the decision goes into
// the flow's Decisions by the gate's step, and a flow.resumed event
// carrying it (sdk.Resumed) is queued for the controller. It refuses,
// changing nothing, with ErrInvalid: a flow that waits at no gate (not
// waiting, or its wait is no sdk gate with a step), a gate of the other
// kind, and a gate already decided (a gate whose wait carries an error,
// which the controller set when it refused the last decision, may be
// decided anew); with *sdk.RevisionConflictError, a stale Expected; with
// ErrCancelRequested, a flow with a cancel request. An answer the gate
// itself refuses — a response that fails the input gate's schema
// (sdk.Wait.Schema), an approval by someone its approver rules do not
// accept (sdk.Wait.CheckApproval) — is refused with ErrInvalid naming
// why; that refusal is written, as a gate.refused history entry, and the
// flow stays waiting at the gate, unchanged.
func (e *Engine) DecideGate(in GateDecision) (*sdk.Flow, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	var (
		out     *sdk.Flow
		refused error
	)
	err := e.write(func(t *txn) error {
		refused = nil
		old, err := resolveFlow(t.tx, in.Flow)
		if err != nil {
			return err
		}
		g, ok := sdk.ParseGate(old.Wait)
		switch {
		case old.Status != sdk.FlowWaiting || !ok || g.Step == "":
			return invalid("flow %s is %s and waits at no gate; list open gates with flowgate approvals", old.ID, old.Status)
		case g.Kind != in.Kind:
			return invalid("flow %s waits at an %s gate (step %s), not an %s gate", old.ID, g.Kind, g.Step, in.Kind)
		case in.Expected != nil && *in.Expected != old.Revision:
			return &sdk.RevisionConflictError{Expected: *in.Expected, Current: old}
		}
		if refused = checkResponse(old, g, in.Decision); refused == nil {
			refused = checkApproval(old, g, in.Decision)
		}
		if refused != nil {
			return t.recordRefusal(old.ID, g, in.Decision, refused)
		}
		out, err = t.decide(old, g, in.Decision)
		return err
	})
	if err == nil && refused != nil {
		return nil, refused
	}
	return out, err
}

// decide records d at gate g of flow old, stamped with the engine's
// clock, and resumes the flow with a flow.resumed event carrying it.
func (t *txn) decide(old *sdk.Flow, g sdk.Wait, d sdk.Decision) (*sdk.Flow, error) {
	d.At = t.now
	f := cloneFlow(old)
	if err := recordDecision(f, g, d); err != nil {
		return nil, err
	}
	if err := t.move(f, sdk.FlowRunning); err != nil {
		return nil, err
	}
	t.explainDecision(f.ID, g, d)
	if err := t.saveFlow(old, f); err != nil {
		return nil, err
	}
	data, err := json.Marshal(sdk.Resumed{Status: f.Status, Step: g.Step, Decision: &d})
	if err != nil {
		return nil, err
	}
	return f, t.appendEvent(f, sdk.EventFlowResumed, "", data)
}

// ExpiredBy is who the gateway names as the author of a gate-expired
// denial.
const ExpiredBy = "flowgate"

// ExpireGates denies every gate whose wait has an Until at or before the
// engine's clock: each such flow gets a denial by ExpiredBy with Reason
// sdk.ReasonGateExpired, recorded and resumed as DecideGate does, so its
// controller ends it as it ends any denied run (the pipeline controller
// cancels it), and the run history can say why. Each gate is decided in
// its own transaction, which re-reads the flow and skips one answered,
// cancelled or parked elsewhere meanwhile. It returns the ids of the
// flows it resumed; an error stops it, keeping what it did.
//
// The gateway's sweep calls it: the deadline lives in the flow's wait, so
// it holds across restarts, and a gate expires at most a sweep interval
// late.
func (e *Engine) ExpireGates() ([]string, error) {
	gates, err := e.OpenGates(GateFilter{})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, og := range gates {
		if w := og.Wait(); w.Until.IsZero() || w.Until.After(e.now()) {
			continue
		}
		resumed := false
		err := e.write(func(t *txn) error {
			resumed = false
			old, err := loadFlow(t.tx, og.FlowID)
			if err != nil {
				return err
			}
			g, ok := sdk.ParseGate(old.Wait)
			if old.Status != sdk.FlowWaiting || !ok || g.Step == "" || g.Until.IsZero() || g.Until.After(t.now) || old.CancelRequested() {
				return nil
			}
			no := false
			if _, err := t.decide(old, g, sdk.Decision{Approved: &no, By: ExpiredBy, Reason: sdk.ReasonGateExpired}); err != nil {
				return err
			}
			resumed = true
			return nil
		})
		if err != nil && !errors.Is(err, sdk.ErrNotFound) {
			return out, fmt.Errorf("expire the gate of flow %s: %w", og.FlowID, err)
		}
		if resumed {
			out = append(out, og.FlowID)
		}
	}
	return out, nil
}

// recordDecision records d at gate g in f's Decisions. Every other
// decision is kept as it was; a decision already recorded at the gate is
// refused unless the controller refused it (the wait carries an error).
func recordDecision(f *sdk.Flow, g sdk.Wait, d sdk.Decision) error {
	if prev, ok := f.Decisions[g.Step]; ok && g.Error == "" {
		return invalid("the gate at step %s of flow %s was already decided by %s at %s", g.Step, f.ID, prev.By, prev.At.Format(time.RFC3339))
	}
	if f.Decisions == nil {
		f.Decisions = map[string]sdk.Decision{}
	}
	f.Decisions[g.Step] = d
	return nil
}

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

func (f GateFilter) match(fl *sdk.Flow, g sdk.Wait) bool {
	return (f.Token == "" || g.ResumeToken == f.Token) &&
		(f.ID == "" || g.ApprovalID == f.ID || fl.ID == f.ID)
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

// Wait returns the sdk fields of the gate.
func (g OpenGate) Wait() sdk.Wait {
	w, _ := sdk.ParseGate(g.Gate)
	return w
}

// OpenGates returns the flows waiting at a gate (sdk.Wait.IsGate) that f
// selects, newest first; none is an empty slice.
func (e *Engine) OpenGates(f GateFilter) ([]OpenGate, error) {
	q, err := FlowFilter{Status: sdk.FlowWaiting, ControllerID: f.ControllerID}.query()
	if err != nil {
		return nil, err
	}
	out := []OpenGate{}
	err = e.view(func(tx store.ReadTx) error {
		flows, _, _, err := q.run(tx) // a damaged flow is no open gate; check lists it
		for _, fl := range flows {
			if g, ok := sdk.ParseGate(fl.Wait); ok && f.match(fl, g) {
				out = append(out, OpenGate{FlowID: fl.ID, Goal: fl.Goal, Since: fl.UpdatedAt, Gate: fl.Wait, Revision: fl.Revision})
			}
		}
		return err
	})
	return out, err
}
