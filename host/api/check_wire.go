package api

import (
	"context"
	"net/http"

	"github.com/flowgate/flowgate/host/api/apitype"
)

func (s *server) check(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if _, err := parseQuery(r); err != nil {
		return 0, nil, err
	}
	rep, err := s.c.Check(r.Context())
	return http.StatusOK, rep, err
}

// Check has the gateway verify its store. It reads the whole store, so
// its answer is awaited scanFactor answer waits.
func (c *Remote) Check(ctx context.Context) (apitype.CheckReport, error) {
	var out apitype.CheckReport
	if err := c.callWithin(ctx, scanFactor*c.wait, http.MethodGet, "/v1/check", nil, nil, &out); err != nil {
		return apitype.CheckReport{}, err
	}
	if out.Problems == nil {
		out.Problems = []apitype.CheckProblem{}
	}
	if out.Quarantine == nil {
		out.Quarantine = []apitype.Quarantined{}
	}
	return out, nil
}
