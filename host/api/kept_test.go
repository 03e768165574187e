package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// A value a flow keeps is read through the gateway's socket as through
// the store, and the gateway's refusals keep their sentinels.
func TestKeptValueThroughTheSocket(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	ctx := context.Background()
	f, err := g.local.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g"})
	require.NoError(t, err)
	value := []byte(`["` + strings.Repeat("x", 8<<10) + `"]`)
	sum, err := g.eng.Keep(f.ID, value)
	require.NoError(t, err)

	got, err := g.remote.KeptValue(ctx, f.ID, sum)
	require.NoError(t, err)
	require.Equal(t, value, got)
	got, err = g.local.KeptValue(ctx, f.ID, sum)
	require.NoError(t, err)
	require.Equal(t, value, got)

	_, err = g.remote.KeptValue(ctx, f.ID, strings.Repeat("0", 64))
	require.ErrorIs(t, err, sdk.ErrNotFound)
	_, err = g.remote.KeptValue(ctx, f.ID, "not-a-digest")
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "64 lowercase hex digits")
	r := do(t, g.sock, "GET", "/v1/flows/"+f.ID+"/kept/"+sum+"?x=1", "")
	require.Equal(t, 400, r.status, "%s", r.body)
}
