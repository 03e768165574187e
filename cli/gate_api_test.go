package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/plugins"
	"github.com/flowgate/flowgate/sdk"
)

// TestPipelineApprovedThroughTheAPI runs a pipeline flow in a real gateway
// with the real pipeline plugin and answers its gate over the API socket,
// as any HTTP client would: no command is involved.
func TestPipelineApprovedThroughTheAPI(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	ctx := t.Context()
	g, err := gateway.New(gateway.Config{Home: home, Owner: t.Name(), Builtins: plugins.Names()})
	require.NoError(t, err)
	require.NoError(t, g.Start(ctx))
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, g.Stop(sctx))
	})
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })

	dir := t.TempDir()
	file := filepath.Join(dir, "ship.lobster")
	require.NoError(t, os.WriteFile(file, []byte("name: ship\nsteps:\n  - id: gate\n    approval: Ship it?\n  - id: after\n    run: echo shipped\n"), 0o600))
	state, err := flows.Invocation{File: file, Cwd: dir}.State()
	require.NoError(t, err)
	f, err := c.CreateFlow(ctx, apitype.CreateFlowInput{ControllerID: flows.PipelineController, OwnerKey: "api", Goal: "ship", State: state})
	require.NoError(t, err)

	var gate apitype.OpenGate
	require.Eventually(t, func() bool {
		gates, err := c.OpenGates(ctx, apitype.GateFilter{ID: f.ID})
		if err != nil || len(gates) == 0 {
			return false
		}
		gate = gates[0]
		return true
	}, 20*time.Second, 20*time.Millisecond, "the flow stops at its gate")
	require.Equal(t, "Ship it?", gate.Wait().Prompt)

	yes := true
	_, err = c.DecideGate(ctx, apitype.GateDecision{Flow: f.ID, Kind: sdk.GateApproval, Expected: &gate.Revision, Decision: sdk.Decision{Approved: &yes, By: "api-user"}})
	require.NoError(t, err)

	var v apitype.FlowView
	require.Eventually(t, func() bool {
		v, err = c.ViewFlow(ctx, f.ID)
		return err == nil && v.Status.Terminal()
	}, 20*time.Second, 20*time.Millisecond, "the approved flow runs on to its end")
	require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)
	var st struct {
		Results map[string]struct {
			ApprovedBy string `json:"approvedBy"`
			Stdout     string `json:"stdout"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(v.State, &st))
	require.Equal(t, "api-user", st.Results["gate"].ApprovedBy, "the controller read the decision the API recorded")
	require.Equal(t, "shipped\n", st.Results["after"].Stdout)
}
