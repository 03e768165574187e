package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/audit"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// TestRemoteAuditMatchesLocal audits the same records through the socket
// and in process, with the same report.
func TestRemoteAuditMatchesLocal(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	ctx := context.Background()
	f, err := g.eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)
	ghost := "no-such-task"
	_, err = g.eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{Status: sdk.FlowBlocked, BlockedTaskID: &ghost})
	require.NoError(t, err)

	r := do(t, g.sock, http.MethodGet, "/v1/audit?x=1", "")
	require.Equal(t, http.StatusBadRequest, r.status, "the route takes no query parameters")

	local, err := g.local.Audit(ctx)
	require.NoError(t, err)
	remote, err := g.remote.Audit(ctx)
	require.NoError(t, err)
	require.Len(t, remote.Findings, 1)
	require.Equal(t, apitype.AuditCode(audit.BlockedTaskMissing), remote.Findings[0].Code)
	require.Equal(t, f.ID, remote.Findings[0].Flow.ID)
	for _, rep := range []*apitype.AuditReport{&local, &remote} {
		require.NotNil(t, rep.Findings[0].AgeMS)
		rep.Findings[0].AgeMS = nil // the two audits ran a moment apart
	}
	require.Equal(t, local, remote)
	require.Equal(t, apitype.AuditCode(audit.ControllerUnavailable), remote.Skipped[0].Code)
}
