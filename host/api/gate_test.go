package api_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// gated creates a flow parked at an approval gate at step "review".
func gated(t *testing.T, eng *engine.Engine) *sdk.Flow {
	t.Helper()
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "pipeline", Goal: "g", State: json.RawMessage(`{"file":"/w"}`)})
	require.NoError(t, err)
	f, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{Wait: json.RawMessage(`{"kind":"approval","step":"review","prompt":"Ship?","resume_token":"tok","approval_id":"abcd1234","items":[]}`)})
	require.NoError(t, err)
	return f
}

func TestGatesOverTheSocket(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	ctx := t.Context()
	f := gated(t, g.eng)

	want, err := g.local.OpenGates(ctx, apitype.GateFilter{Token: "tok"})
	require.NoError(t, err)
	got, err := g.remote.OpenGates(ctx, apitype.GateFilter{Token: "tok", ControllerID: "pipeline", ID: "abcd1234"})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, f.ID, got[0].FlowID)
	require.JSONEq(t, string(want[0].Gate), string(got[0].Gate))
	require.Equal(t, "review", got[0].Wait().Step)
	none, err := g.remote.OpenGates(ctx, apitype.GateFilter{Token: "gone"})
	require.NoError(t, err)
	require.NotNil(t, none)
	require.Empty(t, none)

	yes, stale := true, int64(0)
	refusals := []struct {
		in       apitype.GateDecision
		sentinel error
	}{
		{apitype.GateDecision{Flow: f.ID, Kind: sdk.GateInput, Decision: sdk.Decision{Response: json.RawMessage(`1`)}}, sdk.ErrInvalid},
		{apitype.GateDecision{Flow: f.ID, Kind: sdk.GateApproval, Expected: &stale, Decision: sdk.Decision{Approved: &yes}}, sdk.ErrRevisionConflict},
		{apitype.GateDecision{Flow: "nope", Kind: sdk.GateApproval, Decision: sdk.Decision{Approved: &yes}}, sdk.ErrNotFound},
	}
	for _, r := range refusals {
		_, lerr := g.local.DecideGate(ctx, r.in)
		_, rerr := g.remote.DecideGate(ctx, r.in)
		requireSameError(t, lerr, rerr, r.sentinel)
	}
	_, err = g.remote.DecideGate(ctx, refusals[1].in)
	conflict, ok := errors.AsType[*sdk.RevisionConflictError](err)
	require.True(t, ok, "%T", err)
	require.Equal(t, f.Revision, conflict.Current.Revision, "the conflict carries the flow as it is")

	rev := f.Revision
	done, err := g.remote.DecideGate(ctx, apitype.GateDecision{Flow: f.ID, Kind: sdk.GateApproval, Expected: &rev, Decision: sdk.Decision{Approved: &yes, By: "ana"}})
	require.NoError(t, err)
	require.Equal(t, sdk.FlowRunning, done.Status)
	evs, err := g.eng.Events(f.ID)
	require.NoError(t, err)
	var data sdk.Resumed
	require.NoError(t, json.Unmarshal(evs[len(evs)-1].Data, &data))
	require.Equal(t, "review", data.Step)
	require.Equal(t, "ana", data.Decision.By)

	_, err = g.remote.DecideGate(ctx, apitype.GateDecision{Flow: f.ID, Kind: sdk.GateApproval, Decision: sdk.Decision{Approved: &yes}})
	require.ErrorIs(t, err, sdk.ErrInvalid, "a gate is decided once")
	require.ErrorContains(t, err, "waits at no gate")

	for _, c := range []struct{ method, path, body, msg string }{
		{http.MethodPost, "/v1/gates/decide", `{"flow":"x","kind":"approval","decision":{"approved":true,"who":"x"}}`, `unknown field "who"`},
		{http.MethodGet, "/v1/gates?step=x", "", `unknown query parameter "step"`},
	} {
		r := do(t, g.sock, c.method, c.path, c.body)
		require.Equal(t, http.StatusBadRequest, r.status)
		require.Contains(t, errorOf(t, r).Error.Message, c.msg)
	}
}
