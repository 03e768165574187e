package api

import (
	"context"
	"net/http"
)

// Keeper reads the values flows keep in the store (engine.Engine.Kept):
// a pipeline's output too large for its state is one, and on a store
// several gateways share any of them reads it (flows.OutputFile).
type Keeper interface {
	// KeptValue returns the value flow flowID keeps under digest sum. A
	// value the flow does not keep (never kept, or the flow was pruned)
	// is sdk.ErrNotFound; a sum that is not a SHA-256 in lowercase hex is
	// sdk.ErrInvalid.
	KeptValue(ctx context.Context, flowID, sum string) ([]byte, error)
}

// KeptValue returns a value flow flowID keeps (engine.Engine.Kept).
func (l *Local) KeptValue(ctx context.Context, flowID, sum string) ([]byte, error) {
	return l.engine(ctx).Kept(flowID, sum)
}

// KeptValue returns a value flow flowID keeps, read by the gateway.
func (c *Remote) KeptValue(ctx context.Context, flowID, sum string) ([]byte, error) {
	if flowID == "" {
		return nil, emptyID("flow")
	}
	var out []byte
	if err := c.call(ctx, http.MethodGet, "/v1/flows/"+pathSegment(flowID)+"/kept/"+pathSegment(sum), nil, nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *server) keptValue(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if _, err := parseQuery(r); err != nil {
		return 0, nil, err
	}
	b, err := s.c.KeptValue(r.Context(), r.PathValue("id"), r.PathValue("sum"))
	return http.StatusOK, b, err
}
