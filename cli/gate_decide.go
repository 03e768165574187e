package cli

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// gateFlowID returns the id of the flow waiting at the open gate whose
// short approval id (as flowgate approvals shows it) or flow id is ref.
// Any other ref is returned as it is, for the caller to resolve as a flow
// id or an owner key.
func gateFlowID(ctx context.Context, c api.Gatekeeper, ref string) (string, error) {
	gates, err := c.OpenGates(ctx, apitype.GateFilter{ID: ref})
	if err != nil || len(gates) == 0 {
		return ref, err
	}
	return gates[0].FlowID, nil
}

// runsController reports whether the gateway behind c runs the controller
// plugin named id.
func runsController(ctx context.Context, c api.Client, id string) bool {
	ps, err := c.Plugins(ctx)
	return err == nil && slices.ContainsFunc(ps, func(p api.PluginStatus) bool { return p.Name == id })
}

// decideGate answers the gate of the flow ref names and says what became
// of the flow. A gateway this command hosts is kept until the flow parks
// again or ends, as pipeline resume does, so the answer never leaves the
// flow stuck; so is a denial, so that the answer tells what the
// controller made of it (a pipeline flow is cancelled).
func (e *env) decideGate(ctx context.Context, l *link, ref string, in apitype.GateDecision, asJSON bool) error {
	c := l.c
	id, err := gateFlowID(ctx, c, ref)
	if err != nil {
		return err
	}
	in.Flow = id
	f, err := c.DecideGate(ctx, in)
	if err != nil {
		return err
	}
	step := f.CurrentStep
	denied := in.Decision.Approved != nil && !*in.Decision.Approved
	served := runsController(ctx, c, f.ControllerID)
	followed := served && (hosted(c) || denied)
	if followed {
		v, err := e.followPipeline(ctx, l, f.ID, asJSON)
		if err != nil {
			return err
		}
		f = v.Flow
	}
	return printer{e.stdout, asJSON}.emit(f, func(w io.Writer) {
		fmt.Fprintf(w, "%s the gate at step %s of flow %s (by %s); %s.\n", decisionVerb(in), orNA(clean(step)), f.ID, orNA(clean(in.Decision.By)), afterDecision(f, served, followed))
	})
}

// decisionVerb names what the decision did.
func decisionVerb(in apitype.GateDecision) string {
	switch {
	case in.Kind == sdk.GateInput:
		return "Answered"
	case *in.Decision.Approved:
		return "Approved"
	}
	return "Denied"
}

// afterDecision says where a decided flow stands: followed, how it
// ended or where it parked; else who acts on the answer.
func afterDecision(f *sdk.Flow, served, followed bool) string {
	switch {
	case !served:
		return fmt.Sprintf("no gateway here runs controller %s, so the flow acts on the answer when one does (revision %d)", clean(f.ControllerID), f.Revision)
	case !followed:
		return fmt.Sprintf("the gateway resumes the flow (revision %d)", f.Revision)
	case f.Status == sdk.FlowWaiting:
		return fmt.Sprintf("the flow ran on and waits at step %s (see flowgate approvals)", orNA(clean(f.CurrentStep)))
	}
	return fmt.Sprintf("the flow is %s", f.Status)
}
