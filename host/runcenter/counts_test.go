package runcenter_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// The flow list keeps its pressure line's counts between pages, yet a
// page drawn after a write counts that write: a flow created, then
// ended, shows at once.
func TestFlowListCountsFollowWrites(t *testing.T) {
	t.Parallel()
	s := startSite(t, alice)
	ctx := context.Background()
	require.Contains(t, s.get("/", alice.Token), "0 active · 0 waiting · 0 blocked · 0 cancel-requested · 0 total")
	require.Contains(t, s.get("/", alice.Token), "0 total", "a page with no write between keeps the counts")

	f, err := s.c.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "counts", ControllerID: "ctl", Goal: "counted", AllowUnknownController: true})
	require.NoError(t, err)
	require.Contains(t, s.get("/", alice.Token), "1 active · 0 waiting · 0 blocked · 0 cancel-requested · 1 total")

	_, err = s.c.UpdateFlow(ctx, f.ID, f.Revision, apitype.FlowPatch{Status: sdk.FlowSucceeded})
	require.NoError(t, err)
	require.Contains(t, s.get("/", alice.Token), "0 active · 0 waiting · 0 blocked · 0 cancel-requested · 1 total")
}
