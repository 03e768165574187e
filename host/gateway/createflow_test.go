package gateway_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// spawner creates a flow of its own for every flow it is started on, the
// parent, with a key derived from the parent, and finishes each flow it
// created when that flow's flow.started reaches it, recording that it did.
type spawner struct{ stepper }

func (spawner) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	if ev.Type != sdk.EventFlowStarted {
		return nil
	}
	f, err := h.GetFlow(ctx, ev.FlowID)
	if err != nil || f.Status.Terminal() {
		return err
	}
	if f.ParentFlowID == "" {
		_, _, err := h.CreateFlow(ctx, sdk.FlowRequest{
			IdempotencyKey: f.ID + ":child", Goal: "child of " + f.ID, OwnerKey: f.OwnerKey,
			State: json.RawMessage(`{"made_by":"spawner"}`), Labels: map[string]string{"kind": "child"}, ParentFlowID: f.ID,
		})
		return err
	}
	_, err = h.Finish(ctx, f.ID, f.Revision, sdk.EndRequest{State: json.RawMessage(`{"started_seen":true}`)})
	return err
}

// A controller plugin, a real subprocess, creates a flow through the
// gateway; the created flow's flow.started reaches the plugin as a
// CLI-made flow's does, and the flow is the plugin's, under its parent.
func TestPluginCreatesAFlowAndGetsItsStart(t *testing.T) {
	t.Parallel()
	_, c := startTestGateway(t, 10, testPlugin("spawner", "spawner", nil))
	parent, err := c.CreateFlow(context.Background(), apitype.CreateFlowInput{ControllerID: "spawner", Goal: "spawn one", OwnerKey: "me"})
	require.NoError(t, err)

	child := waitChild(t, c, parent.ID)
	require.Equal(t, sdk.FlowSucceeded, child.Status, child.BlockedSummary)
	require.JSONEq(t, `{"started_seen":true}`, string(child.State), "the plugin handled the created flow's flow.started")
	require.Equal(t, []any{"spawner", sdk.SyncManaged, parent.ID + ":child", map[string]string{"kind": "child"}, "me"},
		[]any{child.ControllerID, child.SyncMode, child.IdempotencyKey, child.Labels, child.OwnerKey})
}

// waitChild waits for the flow the spawner made under parent to end.
func waitChild(t *testing.T, c api.Client, parent string) apitype.FlowView {
	t.Helper()
	var child apitype.FlowView
	polltest.Until(t, "the child of "+parent+" to end", func() bool {
		page, err := c.ViewFlows(context.Background(), apitype.FlowFilter{ControllerID: "spawner"})
		require.NoError(t, err)
		for _, v := range page.Flows {
			if v.ParentFlowID == parent && v.Status.Terminal() {
				child = v
				return true
			}
		}
		return false
	})
	return child
}
