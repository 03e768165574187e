package pluginhost_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// A controller is refused every call on a flow another controller drives,
// in process and over the gRPC host a plugin is handed, and the flow and
// its tasks are left exactly as they were.
func TestControllerIsRefusedAnotherControllersFlow(t *testing.T) {
	t.Parallel()
	hosts := map[string]func(*engine.Engine) sdk.Host{
		"in-process": func(eng *engine.Engine) sdk.Host { return pluginhost.NewHost(eng, conformanceController, nil) },
		"grpc": func(eng *engine.Engine) sdk.Host {
			return sdktest.WireHost(t, pluginhost.NewHost(eng, conformanceController, nil))
		},
	}
	for name, newHost := range hosts {
		t.Run(name, func(t *testing.T) {
			eng := conformanceEngine(t)
			other, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "me", ControllerID: "other", Goal: "not yours"})
			require.NoError(t, err)
			task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: other.ID, OwnerKey: "me", Label: "theirs", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
			require.NoError(t, err)
			h := newHost(eng)
			ctx, rev := context.Background(), other.Revision

			calls := map[string]func() error{
				"GetFlow":   func() error { _, err := h.GetFlow(ctx, other.ID); return err },
				"ListTasks": func() error { _, err := h.ListTasks(ctx, other.ID); return err },
				"CreateTask": func() error {
					_, _, err := h.CreateTask(ctx, sdk.TaskRequest{FlowID: other.ID, IdempotencyKey: "k", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
					return err
				},
				"UpdateFlow": func() error {
					_, err := h.UpdateFlow(ctx, other.ID, rev, sdk.FlowUpdate{State: json.RawMessage(`"mine"`)})
					return err
				},
				"SetWaiting": func() error {
					_, err := h.SetWaiting(ctx, other.ID, rev, sdk.WaitRequest{CurrentStep: "x"})
					return err
				},
				"Resume":        func() error { _, err := h.Resume(ctx, other.ID, rev, sdk.ResumeRequest{}); return err },
				"Finish":        func() error { _, err := h.Finish(ctx, other.ID, rev, sdk.EndRequest{}); return err },
				"Fail":          func() error { _, err := h.Fail(ctx, other.ID, rev, sdk.EndRequest{}); return err },
				"RequestCancel": func() error { _, err := h.RequestCancel(ctx, other.ID, rev); return err },
				"CancelTask":    func() error { _, err := h.CancelTask(ctx, task.ID); return err },
				"CreateFlow": func() error {
					_, _, err := h.CreateFlow(ctx, sdk.FlowRequest{IdempotencyKey: "k", Goal: "g", OwnerKey: "me", ParentFlowID: other.ID})
					return err
				},
			}
			for call, do := range calls {
				err := do()
				require.ErrorIs(t, err, sdk.ErrNotManaged, call)
				require.Contains(t, err.Error(), `driven by "other"`, call)
			}
			after, err := eng.GetFlow(other.ID)
			require.NoError(t, err)
			require.Equal(t, other.Revision, after.Revision, "a refused call changed the flow")
			tasks, err := eng.FlowTasks(other.ID)
			require.NoError(t, err)
			require.Len(t, tasks, 1)
			require.Equal(t, sdk.TaskQueued, tasks[0].Status)
		})
	}
}

// A controller's CreateFlow makes flows only for itself: another
// controller's idempotency key does not name them, and its flow with the
// same key is left alone.
func TestCreateFlowIsTheCallersOwn(t *testing.T) {
	t.Parallel()
	eng := conformanceEngine(t)
	req := sdk.FlowRequest{IdempotencyKey: "same-key", Goal: "g", OwnerKey: "me"}
	theirs, created, err := eng.CreateControllerFlow("other", req)
	require.NoError(t, err)
	require.True(t, created)
	mine, created, err := pluginhost.NewHost(eng, conformanceController, nil).CreateFlow(t.Context(), req)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, conformanceController, mine.ControllerID)
	require.NotEqual(t, theirs.ID, mine.ID)
	again, created, err := sdktest.WireHost(t, pluginhost.NewHost(eng, conformanceController, nil)).CreateFlow(t.Context(), req)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, mine.ID, again.ID, "over gRPC, the key named the flow made in process")
	after, err := eng.GetFlow(theirs.ID)
	require.NoError(t, err)
	require.Equal(t, theirs.Revision, after.Revision)
}

// A host that has seen its controller's flow still reports the flow gone
// once it is pruned: the calls that no longer load the flow to check
// whose it is meet sdk.ErrNotFound in the engine's own read.
func TestSeenFlowIsNotFoundOncePruned(t *testing.T) {
	t.Parallel()
	eng := conformanceEngine(t)
	h := pluginhost.NewHost(eng, conformanceController, nil)
	ctx := t.Context()
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "me", ControllerID: conformanceController, Goal: "seen, then pruned"})
	require.NoError(t, err)
	_, err = h.ListTasks(ctx, f.ID)
	require.NoError(t, err)
	f, err = h.Finish(ctx, f.ID, f.Revision, sdk.EndRequest{})
	require.NoError(t, err)
	_, err = eng.PruneFlow(f.ID, time.Now().Add(time.Hour))
	require.NoError(t, err)

	_, err = h.ListTasks(ctx, f.ID)
	require.ErrorIs(t, err, sdk.ErrNotFound, "ListTasks")
	_, err = h.UpdateFlow(ctx, f.ID, f.Revision, sdk.FlowUpdate{State: json.RawMessage(`{}`)})
	require.ErrorIs(t, err, sdk.ErrNotFound, "UpdateFlow")
	_, err = h.Advance(ctx, f.ID, f.Revision, sdk.AdvanceRequest{Tasks: []sdk.TaskRequest{{FlowID: f.ID, IdempotencyKey: "k", Spec: sdk.TaskSpec{Argv: []string{"true"}}}}})
	require.ErrorIs(t, err, sdk.ErrNotFound, "Advance")
	_, err = h.RequestCancel(ctx, f.ID, f.Revision)
	require.ErrorIs(t, err, sdk.ErrNotFound, "RequestCancel")
}
