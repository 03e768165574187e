package runcenter

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// gateForm is an open gate with what its Approve / Deny / Input form
// sends back: the flow, the kind of gate and the revision read, so an
// answer to a gate that moved on meanwhile is refused, not misapplied.
type gateForm struct {
	FlowID   string
	Goal     string
	Since    time.Time
	Revision int64
	Gate     sdk.Wait
	// Back is the page the form returns to.
	Back string
}

func newGateForm(flowID string, revision int64, g sdk.Wait, back string) *gateForm {
	return &gateForm{FlowID: flowID, Revision: revision, Gate: g, Back: back}
}

// gatesPage lists the open gates, newest first.
func (s *Server) gatesPage(r *http.Request) (string, any, error) {
	gates, err := s.cfg.Client.OpenGates(r.Context(), apitype.GateFilter{})
	if err != nil {
		return "", nil, err
	}
	out := make([]*gateForm, 0, len(gates))
	for _, g := range gates {
		f := newGateForm(g.FlowID, g.Revision, g.Wait(), "/gates")
		f.Goal, f.Since = g.Goal, g.Since
		out = append(out, f)
	}
	return "Open gates", out, nil
}

// decide answers a gate from its form with the API's DecideGate, as
// `tasks flow approve|deny|input` do, by the caller's token name.
func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	rev, err := strconv.ParseInt(r.PostFormValue("revision"), 10, 64)
	if err != nil {
		s.fail(w, r, fmt.Errorf("%w: the form's revision %q is not a number; reload the page", sdk.ErrInvalid, r.PostFormValue("revision")))
		return
	}
	in := apitype.GateDecision{Flow: r.PostFormValue("flow"), Kind: r.PostFormValue("kind"), Expected: &rev,
		Decision: sdk.Decision{By: callerOf(r).name}}
	switch r.PostFormValue("decision") {
	case "approve", "deny":
		yes := r.PostFormValue("decision") == "approve"
		in.Decision.Approved = &yes
	case "input":
		resp := r.PostFormValue("response")
		if !json.Valid([]byte(resp)) {
			s.fail(w, r, fmt.Errorf("%w: the response is not valid JSON; write text in double quotes, like \"yes\"", sdk.ErrInvalid))
			return
		}
		in.Decision.Response = json.RawMessage(resp)
	default:
		s.fail(w, r, fmt.Errorf("%w: decision %q is not approve, deny or input", sdk.ErrInvalid, r.PostFormValue("decision")))
		return
	}
	if _, err := s.cfg.Client.DecideGate(r.Context(), in); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, localPath(r.PostFormValue("back")), http.StatusSeeOther)
}

// cancel cancels a flow with the API's CancelFlow, as `tasks flow
// cancel` does, by the caller's token name.
func (s *Server) cancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.cfg.Client.CancelFlow(r.Context(), id, callerOf(r).name); err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, FlowPath(id), http.StatusSeeOther)
}
