package pipeline_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// On a store several gateways share, state.set, state.get and diff.last
// keep a key's value in the store through the Host (one value per scope
// and key, read by every flow of every gateway), and no file under the
// state directory.
func TestStateStagesKeepValuesInTheSharedStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newControllerWith(pipeline.Options{StateDir: dir, SharedStore: true})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		k := subKey(t)
		require.JSONEq(t, `[null]`, runString(t, h, c, "state.get KEY"), "nothing stored yet")
		require.JSONEq(t, `[1,2]`, runString(t, h, c, `exec --json --shell "echo '[1,2]'" | state.set KEY`))
		got, err := h.Host().StoredValue(t.Context(), "pipelines", k)
		require.NoError(t, err)
		require.Equal(t, `[1,2]`, string(got), "the value is in the store, under the scope and the key")
		require.JSONEq(t, `[{"v":[1,2]}]`, runString(t, h, c, "state.get KEY | map --wrap v"))

		v2 := `exec --json --shell "echo '{\"v\":2}'" | diff.last --key KEY`
		require.JSONEq(t, `[{"kind":"diff.last","key":"`+k+`","changed":true,"before":[1,2],"after":{"v":2}}]`, runString(t, h, c, v2))
		require.JSONEq(t, `[{"kind":"diff.last","key":"`+k+`","changed":false,"before":{"v":2},"after":{"v":2}}]`, runString(t, h, c, v2))
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Empty(t, entries, "nothing is kept under the state directory")
	})
}

// A value over what the shared store keeps under one key is refused
// with a message that says what to do, before the stage's output is
// recorded, and nothing is stored.
func TestStateSetOverTheSharedBoundIsRefused(t *testing.T) {
	t.Parallel()
	c := newControllerWith(pipeline.Options{StateDir: t.TempDir(), SharedStore: true})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		k := subKey(t)
		// The value fits, and so does state.get's output of it; wrapped
		// in an object it does not.
		big, err := json.Marshal(strings.Repeat("x", sdk.MaxKeptValue-5))
		require.NoError(t, err)
		require.NoError(t, h.Host().StoreValue(t.Context(), "pipelines", k, big))
		f := h.StartFlow("p", map[string]any{"pipeline": "state.get " + k + " | map --wrap v | state.set " + k + "-wrapped", "args": map[string]any{}, "cwd": t.TempDir()})
		runActive(t, h, c, f.ID)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Contains(t, f.BlockedSummary, "over the 1048576 the gateway's shared store keeps under one key; store less under it, or split it over several keys")
		_, err = h.Host().StoredValue(t.Context(), "pipelines", k+"-wrapped")
		require.ErrorIs(t, err, sdk.ErrNotFound, "nothing is stored")
	})
}

// A key too long for the shared store's names fails its stage, saying
// what to do, and is not asked of the Host again and again.
func TestStateKeyOverTheSharedNameBoundIsRefused(t *testing.T) {
	t.Parallel()
	c := newControllerWith(pipeline.Options{StateDir: t.TempDir(), SharedStore: true})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		long := strings.Repeat("k", sdk.MaxStoredName+1)
		f := h.StartFlow("p", map[string]any{"pipeline": "state.get " + long, "args": map[string]any{}, "cwd": t.TempDir()})
		runActive(t, h, c, f.ID)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Contains(t, f.BlockedSummary, "longer than the 256 bytes the gateway's shared store takes for each; use a shorter key")
	})
}
