package api

import (
	"context"
	"net/http"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// Continuer accepts continuations of failed or partial flows.
type Continuer interface {
	// ContinueFlow asks for the one continuation of flow id (see
	// engine.ContinueFlow): the successor, created false when an
	// identical request had made it before.
	ContinueFlow(ctx context.Context, id string, req sdk.ContinueRequest) (apitype.ContinueResult, error)
}

// RunningController is the controller plugin id as the gateway behind c
// runs it, "name@version", for ContinueRequest.Controller: the check that
// a continuation runs under the controller that made the plan. It is
// empty when no gateway runs or the plugin has not reported its version
// yet (the check is then skipped).
func RunningController(ctx context.Context, c Client, id string) string {
	ps, err := c.Plugins(ctx)
	if err != nil {
		return ""
	}
	for _, p := range ps {
		if p.Name == id && p.Version != "" {
			return p.Name + "@" + p.Version
		}
	}
	return ""
}

// ContinueFlow accepts or refuses a continuation in this process.
func (l *Local) ContinueFlow(ctx context.Context, id string, req sdk.ContinueRequest) (apitype.ContinueResult, error) {
	f, created, err := l.engine(ctx).ContinueFlow(id, req)
	return apitype.ContinueResult{Flow: f, Created: created}, err
}

// ContinueFlow asks the gateway for a continuation.
func (c *Remote) ContinueFlow(ctx context.Context, id string, req sdk.ContinueRequest) (apitype.ContinueResult, error) {
	if id == "" {
		return apitype.ContinueResult{}, emptyID("flow")
	}
	var out apitype.ContinueResult
	err := c.call(ctx, http.MethodPost, "/v1/flows/"+pathSegment(id)+"/continue", nil, req, &out)
	return out, err
}

func (s *server) continueFlow(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in sdk.ContinueRequest
	if err := decodeRequest(w, r, &in); err != nil {
		return 0, nil, err
	}
	res, err := s.c.ContinueFlow(r.Context(), r.PathValue("id"), in)
	if res.Created {
		return http.StatusCreated, res, err
	}
	return http.StatusOK, res, err
}
