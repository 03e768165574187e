package api

import (
	"context"
	"net/http"

	"github.com/flowgate/flowgate/host/api/apitype"
)

// Retrier runs single runs again under their flow's handle.
type Retrier interface {
	// RetryFlow runs the latest task of mirrored flow id again as a new
	// task of the same flow (see engine.RetryFlow), guarded by expected,
	// the flow's revision as the caller read it; by names who asked
	// (empty: engine.CancelByOperator) in the flow's history.
	RetryFlow(ctx context.Context, id string, expected int64, by string) (apitype.RetryResult, error)
}

// retryFlowRequest is the body of POST /v1/flows/{id}/retry.
type retryFlowRequest struct {
	ExpectedRevision int64  `json:"expected_revision"`
	By               string `json:"by,omitempty"`
}

// RetryFlow retries a flow in this process.
func (l *Local) RetryFlow(ctx context.Context, id string, expected int64, by string) (apitype.RetryResult, error) {
	r, err := l.engine(ctx).RetryFlow(id, expected, by)
	return apitype.RetryResult(r), err
}

// RetryFlow asks the gateway to retry a flow.
func (c *Remote) RetryFlow(ctx context.Context, id string, expected int64, by string) (apitype.RetryResult, error) {
	if id == "" {
		return apitype.RetryResult{}, emptyID("flow")
	}
	var out apitype.RetryResult
	err := c.call(ctx, http.MethodPost, "/v1/flows/"+pathSegment(id)+"/retry", nil, retryFlowRequest{ExpectedRevision: expected, By: by}, &out)
	return out, err
}

func (s *server) retryFlow(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in retryFlowRequest
	if err := decodeRequest(w, r, &in); err != nil {
		return 0, nil, err
	}
	res, err := s.c.RetryFlow(r.Context(), r.PathValue("id"), in.ExpectedRevision, in.By)
	return http.StatusOK, res, err
}
