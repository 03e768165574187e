package api_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

func TestRemoteContinueFlowAndListByChain(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	ctx := t.Context()
	f, err := g.remote.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g",
		State: json.RawMessage(`{"plan":{"nodes":[{"id":"a","status":"succeeded"},{"id":"b"}]}}`)})
	require.NoError(t, err)
	f, err = g.eng.Fail(f.ID, f.Revision, engine.EndInput{})
	require.NoError(t, err)

	_, err = g.remote.ContinueFlow(ctx, f.ID, sdk.ContinueRequest{ExpectedRevision: f.Revision - 1, Reason: "b"})
	require.ErrorIs(t, err, sdk.ErrRevisionConflict)
	req := sdk.ContinueRequest{ExpectedRevision: f.Revision, Reason: "b never ran"}
	res, err := g.remote.ContinueFlow(ctx, f.ID, req)
	require.NoError(t, err)
	require.True(t, res.Created)
	require.Equal(t, []string{"b"}, res.Flow.Continuation.Rerun)
	again, err := g.remote.ContinueFlow(ctx, f.ID, req)
	require.NoError(t, err)
	require.Equal(t, res.Flow.ID, again.Flow.ID)
	require.False(t, again.Created)
	req.Reason = "other"
	_, err = g.remote.ContinueFlow(ctx, f.ID, req)
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "(one continuation)")

	page, err := g.remote.ViewFlows(ctx, apitype.FlowFilter{ChainID: f.ID})
	require.NoError(t, err)
	require.Len(t, page.Flows, 2)
	require.Equal(t, res.Flow.ID, page.Flows[0].ID)
	require.Equal(t, res.Flow.ID, page.Flows[1].ContinuedBy)
}
