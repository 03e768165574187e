package runcenter

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
)

// flowActions are the actions a flow's page offers, each only where the
// engine would take it, so a button never leads to a certain refusal.
// The engine still decides: the page may be stale.
type flowActions struct {
	ID string
	// Continue is a failed or partial managed flow's one continuation
	// (rerun what did not finish, reuse what succeeded); Rerun the same
	// from a step the person picks, which a succeeded flow allows too.
	Continue, Rerun bool
	// Retry runs a mirrored flow's single run again.
	Retry bool
	// Cancel stops a flow that has not ended.
	Cancel bool
}

// actionsOf says which actions flow v takes. A continuation needs a plan
// and a chain that has no continuation yet, and applies the engine's own
// rule (flowrule.Settled) for the rest.
func actionsOf(v apitype.FlowView) flowActions {
	a := flowActions{ID: v.ID, Cancel: !v.Status.Terminal() && !v.CancelRequested()}
	if v.SyncMode != sdk.SyncManaged {
		a.Retry = sdk.CheckFlowRetry(v.Flow) == nil
		return a
	}
	plan, err := flowrule.PlanOf(v.Flow)
	if err != nil || v.SourceFlowID != "" || v.ContinuedBy != "" {
		return a
	}
	tasks := stored.Publics(v.Tasks)
	a.Continue = flowrule.Settled(v.Flow, tasks, false) == nil
	a.Rerun = len(plan.Nodes) > 0 && flowrule.Settled(v.Flow, tasks, true) == nil
	return a
}

// flowActionRoutes serves each flow action as a confirmation page (GET)
// and the form it posts (POST). The cancel form's POST is served with the
// gate answers (gates.go).
func (s *Server) flowActionRoutes() {
	s.mux.HandleFunc("GET /flows/{id}/continue", s.confirmFlow(continueConfirm(false)))
	s.mux.HandleFunc("GET /flows/{id}/rerun", s.confirmFlow(continueConfirm(true)))
	s.mux.HandleFunc("POST /flows/{id}/continue", s.continueFlow)
	s.mux.HandleFunc("GET /flows/{id}/retry", s.confirmFlow(retryConfirm))
	s.mux.HandleFunc("POST /flows/{id}/retry", s.retryFlow)
	s.mux.HandleFunc("GET /flows/{id}/cancel", s.confirmFlow(cancelConfirm))
}

// confirmFlow answers the confirmation page that page makes of the flow
// the path names.
func (s *Server) confirmFlow(page func(apitype.FlowView) confirmPage) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := s.cfg.Client.ViewFlow(r.Context(), r.PathValue("id"))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		p := page(v)
		p.Goal = v.Goal
		s.showConfirm(w, r, http.StatusOK, p)
	}
}

// defaultReason is the reason a continuation from the page proposes; the
// person may write their own.
const defaultReason = "continued from the run center"

// continueConfirm is the question before continuing flow v, or, with
// rerun, before rerunning it from a step chosen among its plan's steps
// (the failed one first chosen, else the first).
func continueConfirm(rerun bool) func(apitype.FlowView) confirmPage {
	return func(v apitype.FlowView) confirmPage {
		p := confirmPage{Heading: "Continue flow " + v.ID + "?", Post: FlowPath(v.ID) + "/continue", Back: FlowPath(v.ID),
			Button: "Continue", Revision: v.Revision, AskReason: true, Reason: defaultReason,
			What: "A new run in the same chain reruns the steps that did not finish and reuses those that succeeded; this flow stays as it is."}
		if !rerun {
			return p
		}
		p.Heading, p.Button, p.Reason = "Rerun flow "+v.ID+" from a step?", "Rerun", "rerun from the run center"
		p.What = "A new run in the same chain reruns the chosen step and every step after it, and reuses the steps before it; this flow stays as it is."
		if plan, err := flowrule.PlanOf(v.Flow); err == nil {
			for _, n := range plan.Nodes {
				p.Steps = append(p.Steps, n.ID)
				if n.Status == sdk.NodeFailed && p.FromStep == "" {
					p.FromStep = n.ID
				}
			}
		}
		return p
	}
}

// retryConfirm is the question before retrying mirrored flow v.
func retryConfirm(v apitype.FlowView) confirmPage {
	return confirmPage{Heading: "Retry flow " + v.ID + "?", Post: FlowPath(v.ID) + "/retry", Back: FlowPath(v.ID),
		Button: "Retry", Revision: v.Revision,
		What: "The flow's command runs again as a new task of the same flow; the earlier tasks keep their status and logs."}
}

// cancelConfirm is the question before cancelling flow v.
func cancelConfirm(v apitype.FlowView) confirmPage {
	return confirmPage{Heading: "Cancel flow " + v.ID + "?", Post: FlowPath(v.ID) + "/cancel", Back: FlowPath(v.ID),
		Button: "Cancel flow", Danger: true,
		What: "Its running tasks are stopped and it ends cancelled. A cancelled flow cannot be continued."}
}

// formRevision reads the revision the confirmation page read.
func formRevision(r *http.Request) (int64, error) {
	rev, err := strconv.ParseInt(r.PostFormValue("revision"), 10, 64)
	if err != nil || rev <= 0 {
		return 0, fmt.Errorf("%w: the form's revision %q is not a flow revision; reload the page", sdk.ErrInvalid, r.PostFormValue("revision"))
	}
	return rev, nil
}

// continueFlow continues a flow, from the step the form names if any,
// with the API's ContinueFlow, as `tasks flow continue` does, by the
// caller's token name; then it shows the successor's page.
func (s *Server) continueFlow(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	v, err := s.cfg.Client.ViewFlow(ctx, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	from := strings.TrimSpace(r.PostFormValue("from_step"))
	p := continueConfirm(from != "")(v)
	p.Reason, p.FromStep = r.PostFormValue("reason"), from
	rev, err := formRevision(r)
	if err != nil {
		s.refused(w, r, p, err)
		return
	}
	p.Revision = rev
	req := sdk.ContinueRequest{ExpectedRevision: rev, Reason: p.Reason, FromStep: from, By: callerOf(r).name,
		Controller: api.RunningController(ctx, s.cfg.Client, v.ControllerID)}
	res, err := s.cfg.Client.ContinueFlow(ctx, v.ID, req)
	if err != nil {
		s.refused(w, r, p, err)
		return
	}
	http.Redirect(w, r, FlowPath(res.Flow.ID), http.StatusSeeOther)
}

// retryFlow retries a mirrored flow with the API's RetryFlow at the
// revision the page read, as `tasks flow retry` does, by the caller's
// token name.
func (s *Server) retryFlow(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	v, err := s.cfg.Client.ViewFlow(ctx, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := retryConfirm(v)
	rev, err := formRevision(r)
	if err == nil {
		p.Revision = rev
		_, err = s.cfg.Client.RetryFlow(ctx, v.ID, rev, callerOf(r).name)
	}
	if err != nil {
		s.refused(w, r, p, err)
		return
	}
	http.Redirect(w, r, FlowPath(v.ID), http.StatusSeeOther)
}
