package sdktest_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// snoozer sets a wake an hour after the flow starts, asking twice as a
// redelivered event would, and finishes the flow when it is woken,
// recording the key.
type snoozer struct{ start time.Time }

func (snoozer) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "snoozer", APIVersion: sdk.APIVersion}, nil
}

func (snoozer) Shutdown(context.Context) error { return nil }

func (s snoozer) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	f, err := h.GetFlow(ctx, ev.FlowID)
	if err != nil {
		return err
	}
	switch ev.Type {
	case sdk.EventFlowStarted:
		for range 2 {
			if err := h.WakeAt(ctx, f.ID, s.start.Add(time.Hour), "nap"); err != nil {
				return err
			}
		}
	case sdk.EventFlowWoken:
		var w sdk.Woken
		if err := json.Unmarshal(ev.Data, &w); err != nil {
			return err
		}
		state, _ := json.Marshal(map[string]string{"woken": w.Key})
		_, err = h.Finish(ctx, f.ID, f.Revision, sdk.EndRequest{State: state})
	}
	return err
}

// Harness.FireWakes plays the gateway's clock: a wake fires when it is
// due, once per key, and its flow.woken is delivered.
func TestHarnessFiresWakes(t *testing.T) {
	start := time.Now().UTC().Truncate(time.Millisecond)
	sdktest.Run(t, snoozer{start: start}, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("nap", nil)
		require.Equal(t, []sdk.Woken{{Key: "nap", At: start.Add(time.Hour)}}, h.Host().Wakes(f.ID))
		h.FireWakes(start.Add(time.Minute))
		require.Equal(t, sdk.FlowQueued, h.Flow(f.ID).Status, "not due yet")
		h.FireWakes(start.Add(time.Hour))
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status)
		require.JSONEq(t, `{"woken":"nap"}`, string(f.State))
		require.Empty(t, h.Host().Wakes(f.ID))
	})
}
