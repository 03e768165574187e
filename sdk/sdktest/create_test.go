package sdktest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// splitter creates one flow of its own, under its parent, for each flow
// started without a parent, and finishes every flow it created when its
// flow.started comes.
type splitter struct{}

func (splitter) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "splitter", Version: "1.0.0", APIVersion: sdk.APIVersion}, nil
}

func (splitter) Shutdown(context.Context) error { return nil }

func (splitter) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	f, err := h.GetFlow(ctx, ev.FlowID)
	if err != nil || ev.Type != sdk.EventFlowStarted {
		return err
	}
	if f.ParentFlowID != "" {
		_, err = h.Finish(ctx, f.ID, f.Revision, sdk.EndRequest{})
		return err
	}
	_, _, err = h.CreateFlow(ctx, sdk.FlowRequest{IdempotencyKey: f.ID + ":part", Goal: "part of " + f.ID, OwnerKey: f.OwnerKey, ParentFlowID: f.ID})
	return err
}

// A controller that creates flows is tested with the harness, in process
// and over gRPC: the created flow is the controller's, under its parent,
// with its flow.started queued, and after a redelivered event the key
// still names it, with that one event queued.
func TestRunControllerCreatesAFlow(t *testing.T) {
	sdktest.Run(t, splitter{}, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("split", nil)
		part, err := h.Host().CreatedFlow(f.ID + ":part")
		require.NoError(t, err)
		require.Equal(t, []any{"splitter", f.ID, sdk.FlowQueued}, []any{part.ControllerID, part.ParentFlowID, part.Status})
		require.NoError(t, h.Deliver(sdk.Event{FlowID: f.ID, Seq: 1, Type: sdk.EventFlowStarted, Deliveries: 1}))
		again, err := h.Host().CreatedFlow(f.ID + ":part")
		require.NoError(t, err)
		require.Equal(t, part.ID, again.ID)
		require.Len(t, h.Host().Events(part.ID), 1)
		h.Drain(part.ID)
		require.Equal(t, sdk.FlowSucceeded, h.Flow(part.ID).Status)
		_, err = h.Host().CreatedFlow("no such key")
		require.ErrorIs(t, err, sdk.ErrNotFound)
	})
}
