package api

import (
	"context"
	"net/http"
	"net/url"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// Gatekeeper is the part of Client that lists and answers gates: the
// flows that wait until someone approves, denies or gives an input
// (`flowgate approvals`, `tasks flow approve|deny|input`, `pipeline
// resume`). Both calls are the engine's (engine.OpenGates,
// engine.DecideGate), so every client answers a gate the same way.
type Gatekeeper interface {
	// OpenGates lists the flows waiting at a gate that f selects, newest
	// first.
	OpenGates(ctx context.Context, f apitype.GateFilter) ([]apitype.OpenGate, error)
	// DecideGate records an answer at the gate a flow waits at and
	// resumes the flow; see engine.DecideGate for what it refuses.
	DecideGate(ctx context.Context, in apitype.GateDecision) (*sdk.Flow, error)
}

// OpenGates lists the open gates of the store.
func (l *Local) OpenGates(ctx context.Context, f apitype.GateFilter) ([]apitype.OpenGate, error) {
	g, err := l.engine(ctx).OpenGates(engine.GateFilter(f))
	return openGatesOf(g), err
}

// DecideGate answers a gate in the store.
func (l *Local) DecideGate(ctx context.Context, in apitype.GateDecision) (*sdk.Flow, error) {
	return l.engine(ctx).DecideGate(engine.GateDecision(in))
}

// OpenGates has the gateway list its open gates.
func (c *Remote) OpenGates(ctx context.Context, f apitype.GateFilter) ([]apitype.OpenGate, error) {
	q := url.Values{}
	setQuery(q, "controller", f.ControllerID)
	setQuery(q, "token", f.Token)
	setQuery(q, "id", f.ID)
	var out gatesResponse
	if err := c.call(ctx, http.MethodGet, "/v1/gates", q, nil, &out); err != nil {
		return nil, err
	}
	if out.Gates == nil {
		out.Gates = []apitype.OpenGate{}
	}
	return out.Gates, nil
}

// DecideGate has the gateway answer a gate; a stale expected revision
// fails with *sdk.RevisionConflictError.
func (c *Remote) DecideGate(ctx context.Context, in apitype.GateDecision) (*sdk.Flow, error) {
	var out *sdk.Flow
	if err := c.call(ctx, http.MethodPost, "/v1/gates/decide", nil, decideRequest(in), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// gatesResponse is the answer to GET /v1/gates.
type gatesResponse struct {
	Gates []apitype.OpenGate `json:"gates"`
}

// decideRequest is the body of POST /v1/gates/decide.
type decideRequest struct {
	Flow     string       `json:"flow"`
	Kind     string       `json:"kind"`
	Expected *int64       `json:"expected_revision,omitempty"`
	Decision sdk.Decision `json:"decision"`
}

func (s *server) openGates(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q, err := parseQuery(r, "controller", "token", "id")
	if err != nil {
		return 0, nil, err
	}
	gates, err := s.c.OpenGates(r.Context(), apitype.GateFilter{ControllerID: q.Get("controller"), Token: q.Get("token"), ID: q.Get("id")})
	return http.StatusOK, gatesResponse{Gates: gates}, err
}

func (s *server) decideGate(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in decideRequest
	if err := decodeRequest(w, r, &in); err != nil {
		return 0, nil, err
	}
	f, err := s.c.DecideGate(r.Context(), apitype.GateDecision(in))
	return http.StatusOK, f, err
}
