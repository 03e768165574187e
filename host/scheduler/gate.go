package scheduler

import (
	"fmt"
	"sort"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// GateWait is where a pipeline run stands while its flow waits at a gate:
// under the default overlap policy (skip) every later run of the job is
// skipped until someone answers it, so cron runs and cron status show it.
type GateWait struct {
	// Step is the gate's step, ApprovalID its short id (empty at an input
	// gate, which the flow id answers).
	Step       string `json:"step"`
	Kind       string `json:"kind"`
	ApprovalID string `json:"approval_id,omitempty"`
	FlowID     string `json:"flow_id"`
	// Since is when the flow stopped at the gate, Until when an unanswered
	// gate is denied as gate-expired (zero: never).
	Since time.Time `json:"since"`
	Until time.Time `json:"until,omitzero"`
}

// String reads "waiting at gate G since T".
func (g GateWait) String() string {
	s := fmt.Sprintf("waiting at gate %s since %s", g.Step, g.Since.UTC().Format(time.RFC3339))
	if !g.Until.IsZero() {
		s += ", expires " + g.Until.UTC().Format(time.RFC3339)
	}
	return s
}

// gateWait returns where the flow with id waits at a gate, or nil when it
// does not (or cannot be read).
func (s *Scheduler) gateWait(flowID string) *GateWait {
	if flowID == "" {
		return nil
	}
	f, err := s.eng.GetFlow(flowID)
	if err != nil || f.Status != sdk.FlowWaiting {
		return nil
	}
	g, ok := sdk.ParseGate(f.Wait)
	if !ok {
		return nil
	}
	return &GateWait{Step: g.Step, Kind: g.Kind, ApprovalID: g.ApprovalID, FlowID: f.ID, Since: f.UpdatedAt, Until: g.Until}
}

// deniedText says why a pipeline flow ended cancelled at a gate: "denied
// by X at gate S", or "gate-expired: …" when the gateway denied a gate
// nobody answered in time; empty when no gate of the flow was denied.
func deniedText(f *sdk.Flow) string {
	steps := make([]string, 0, len(f.Decisions))
	for step, d := range f.Decisions {
		if d.Approved != nil && !*d.Approved {
			steps = append(steps, step)
		}
	}
	if len(steps) == 0 {
		return ""
	}
	sort.Strings(steps)
	step, d := steps[0], f.Decisions[steps[0]]
	if d.Reason == sdk.ReasonGateExpired {
		return fmt.Sprintf("%s: nobody answered the gate at step %s in time", sdk.ReasonGateExpired, step)
	}
	by := d.By
	if by == "" {
		by = "an unnamed user"
	}
	return fmt.Sprintf("denied by %s at gate %s", by, step)
}
