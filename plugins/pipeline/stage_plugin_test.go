package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// provideCounter gives h's Host a stage "count.items", provided by plugin
// "counter", that answers {"n": number of items, "args": args} and counts
// its runs in calls.
func provideCounter(h *sdktest.Harness, calls *atomic.Int32) {
	h.Host().ProvideStage(sdk.Stage{Name: "count.items", Description: "Count the items", SideEffects: []string{"network"}, Plugin: "counter"},
		func(_ context.Context, call sdk.StageCall) (json.RawMessage, error) {
			calls.Add(1)
			var items []any
			if err := json.Unmarshal(call.Items, &items); err != nil {
				return nil, err
			}
			return json.Marshal(map[string]any{"n": len(items), "args": call.Args, "key": call.Key != ""})
		})
}

// TestPluginStage: a stage another plugin provides runs through the
// host with the items as a JSON array and Lobster's args object; its one
// JSON value is one item; commands.list names it with its plugin.
func TestPluginStage(t *testing.T) {
	t.Parallel()
	c := newControllerWith(pipeline.Options{})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		var calls atomic.Int32
		provideCounter(h, &calls)
		out := runString(t, h, c, `exec --json --shell "echo '[1,2,3]'" | count.items pos --model=m`)
		require.JSONEq(t, `[{"n":3,"args":{"model":"m","_":["pos"]},"key":true}]`, out)
		require.JSONEq(t, `[{"name":"count.items","description":"Count the items","sideEffects":["network"],"plugin":"counter"}]`,
			runString(t, h, c, `commands.list | where name==count.items`))
	})
}

// TestPluginStageRunsOnceAcrossPasses: the stage's output is recorded
// in the flow's state, so the pass after the approve gate gives the
// recorded items without asking the plugin again.
func TestPluginStageRunsOnceAcrossPasses(t *testing.T) {
	t.Parallel()
	c := newControllerWith(pipeline.Options{})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		var calls atomic.Int32
		provideCounter(h, &calls)
		f := h.StartFlow("p", map[string]any{"pipeline": `count.items | approve --prompt ok? | pick n`, "args": map[string]any{}, "cwd": t.TempDir()})
		w := readWait(t, h.Flow(f.ID))
		require.EqualValues(t, 1, calls.Load())
		f = decide(t, h, f.ID, w.Step, map[string]any{"approved": true})
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		require.JSONEq(t, `[{"n":0}]`, string(st.Output))
		require.EqualValues(t, 1, calls.Load(), "the stage ran again after the gate")
	})
}

// TestPluginStageFailureFailsTheFlow: a stage's error fails the flow with
// the plugin's message.
func TestPluginStageFailureFailsTheFlow(t *testing.T) {
	t.Parallel()
	c := newControllerWith(pipeline.Options{})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		h.Host().ProvideStage(sdk.Stage{Name: "mail.send"}, func(context.Context, sdk.StageCall) (json.RawMessage, error) {
			return nil, errors.New("stage mail.send of plugin mail: the server refused the login; check the password")
		})
		f := h.StartFlow("p", map[string]any{"pipeline": `mail.send`, "args": map[string]any{}, "cwd": t.TempDir()})
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Contains(t, f.BlockedSummary, "stage mail.send of plugin mail: the server refused the login; check the password")
	})
}

// TestBuiltinStageNames: flows.IsBuiltinStage, which the gateway refuses
// plugin stages by, names exactly the commands the pipeline controller
// has of its own.
func TestBuiltinStageNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"where", "commands.list", "exec", "approve", "ask", "state.get", "state.set", "diff.last", "llm.invoke", "llm_task.invoke"} {
		require.True(t, flows.IsBuiltinStage(name), name)
		require.True(t, pipeline.Options{}.Commands().Has(name), name)
	}
	require.False(t, flows.IsBuiltinStage("summarize"))
	require.False(t, pipeline.Options{}.Commands().Has("summarize"))
	require.True(t, pipeline.Options{PluginStages: []sdk.Stage{{Name: "summarize"}}}.Commands().Has("summarize"))
}

// TestPluginStageUnavailableRetries: while the stage's plugin restarts
// (sdk.ErrUnavailable), the event fails and the flow stays as it was, to
// run the stage when the event comes again; it does not fail the flow.
func TestPluginStageUnavailableRetries(t *testing.T) {
	t.Parallel()
	c := newControllerWith(pipeline.Options{})
	host := sdktest.NewHost()
	var up atomic.Bool
	host.ProvideStage(sdk.Stage{Name: "summarize", Plugin: "sum"}, func(context.Context, sdk.StageCall) (json.RawMessage, error) {
		if !up.Load() {
			return nil, fmt.Errorf("%w: pipeline stage summarize is provided by plugin sum, which is starting or restarting", sdk.ErrUnavailable)
		}
		return json.RawMessage(`["summary"]`), nil
	})
	state, err := json.Marshal(map[string]any{"pipeline": "summarize", "args": map[string]any{}, "cwd": t.TempDir()})
	require.NoError(t, err)
	f, err := host.NewFlow(pipeline.Name, "p", state)
	require.NoError(t, err)
	ev := host.Events(f.ID)[0]
	require.ErrorIs(t, c.HandleEvent(t.Context(), host, ev), sdk.ErrUnavailable)
	f, err = host.GetFlow(t.Context(), f.ID)
	require.NoError(t, err)
	require.False(t, f.Status.Terminal(), "the flow ended while the stage's plugin restarted: %s", f.BlockedSummary)

	up.Store(true)
	require.NoError(t, c.HandleEvent(t.Context(), host, ev))
	f, err = host.GetFlow(t.Context(), f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
	st, _ := readState(t, f)
	require.JSONEq(t, `["summary"]`, string(st.Output))
}
