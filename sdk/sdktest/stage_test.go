package sdktest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// shouter provides one stage, shout, which answers how many items and
// which args it got; it fails on --fail and panics on --panic.
type shouter struct{ fetcher }

func (shouter) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "shouter", APIVersion: sdk.APIVersion, Stages: []sdk.Stage{{Name: "shout", SideEffects: []string{"network"}}}}, nil
}

func (shouter) RunStage(_ context.Context, _ sdk.Host, call sdk.StageCall) (json.RawMessage, error) {
	var args map[string]any
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return nil, err
	}
	if args["panic"] == true {
		panic("shouted too loud")
	}
	if args["fail"] == true {
		return nil, fmt.Errorf("%w: shout needs a voice; pass --voice", sdk.ErrInvalid)
	}
	var items []any
	if err := json.Unmarshal(call.Items, &items); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"items": len(items), "args": args, "key": call.Key, "flow": call.FlowID})
}

// TestStageProvider: a controller's StageProvider answers RunStage in
// process and over the wire: its output, its error with the sentinel
// kept, and a panic as an error naming the stage.
func TestStageProvider(t *testing.T) {
	sdktest.Run(t, shouter{}, func(t *testing.T, h *sdktest.Harness) {
		out, err := h.RunStage("f1", "shout", map[string]any{"loud": true}, []any{1, 2})
		require.NoError(t, err)
		require.JSONEq(t, `{"items":2,"args":{"loud":true},"key":"f1:shout","flow":"f1"}`, string(out))

		_, err = h.RunStage("f1", "shout", map[string]any{"fail": true}, nil)
		require.ErrorIs(t, err, sdk.ErrInvalid)
		require.ErrorContains(t, err, "shout needs a voice; pass --voice")
	})
}

// TestStageProviderPanic: over the wire, a stage's panic is an error
// naming the stage, and the plugin keeps serving; in process, the panic
// is the test's.
func TestStageProviderPanic(t *testing.T) {
	sdktest.Run(t, shouter{}, func(t *testing.T, h *sdktest.Harness) {
		shout := func() (json.RawMessage, error) { return h.RunStage("f1", "shout", map[string]any{"panic": true}, nil) }
		if strings.HasSuffix(t.Name(), "/in-process") {
			require.Panics(t, func() { _, _ = shout() })
			return
		}
		_, err := shout()
		require.ErrorContains(t, err, "controller panicked running stage shout of flow f1: shouted too loud")
		_, err = h.RunStage("f1", "shout", nil, nil)
		require.NoError(t, err)
	})
}

// TestStagesWithoutProvider: a controller that declares no StageProvider
// fails a run of a stage, saying to add RunStage.
func TestStagesWithoutProvider(t *testing.T) {
	sdktest.Run(t, fetcher{}, func(t *testing.T, h *sdktest.Harness) {
		_, err := h.RunStage("f1", "shout", nil, nil)
		require.ErrorContains(t, err, "does not implement sdk.StageProvider")
	})
}

// TestHostProvideStage: the test Host lists and runs the stages a test
// gives it, as the gateway does another plugin's.
func TestHostProvideStage(t *testing.T) {
	h := sdktest.NewHost()
	f, err := h.NewFlow("c", "goal", nil)
	require.NoError(t, err)
	h.ProvideStage(sdk.Stage{Name: "llm.invoke"}, func(_ context.Context, call sdk.StageCall) (json.RawMessage, error) {
		return call.Items, nil
	})
	st, err := h.ListStages(t.Context())
	require.NoError(t, err)
	require.Equal(t, []sdk.Stage{{Name: "llm.invoke", Plugin: "sdktest-stages"}}, st)
	out, err := h.RunStage(t.Context(), sdk.StageCall{FlowID: f.ID, Name: "llm.invoke", Items: []byte(`[1]`)})
	require.NoError(t, err)
	require.JSONEq(t, `[1]`, string(out))
	_, err = h.RunStage(t.Context(), sdk.StageCall{FlowID: f.ID, Name: "gog.send"})
	require.ErrorIs(t, err, sdk.ErrNotFound)
}
