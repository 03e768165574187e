package pipeline_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// Without a data directory every value stays inline, and a state over
// its bound fails the flow naming the largest step result; with one, the
// same workflow succeeds, its results kept in files.
func TestLargeResultsNeedADataDirectory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dir  string
	}{{"inline", ""}, {"kept", t.TempDir()}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &controller{Controller: pipeline.NewWithOptions(pipeline.Options{DataDir: tc.dir}), runner: &runner{}}
			sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
				f, _ := start(t, h, "big-inline.lobster", nil)
				for range 4 {
					c.runner.next(t, h, f.ID)
				}
				f = h.Flow(f.ID)
				if tc.dir == "" {
					require.Equal(t, sdk.FlowFailed, f.Status)
					require.Contains(t, f.BlockedSummary, "the largest step result is s4 (")
					return
				}
				require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
				require.Less(t, len(f.State), 16<<10)
			})
		})
	}
}

// On a store several gateways share, the same workflow keeps its large
// results and its output in the store through the Host, where every
// gateway reads them, and no file in the data directory.
func TestLargeResultsKeptInTheSharedStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &controller{Controller: pipeline.NewWithOptions(pipeline.Options{DataDir: dir, SharedStore: true}), runner: &runner{}}
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "big-inline.lobster", nil)
		for range 4 {
			c.runner.next(t, h, f.ID)
		}
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		_, raw := readState(t, f)
		var results map[string]struct {
			Spilled string `json:"spilled"`
		}
		require.NoError(t, json.Unmarshal(raw["results"], &results))
		require.Len(t, results, 4)
		for id, r := range results {
			_, err := h.Host().KeptValue(t.Context(), f.ID, r.Spilled)
			require.NoError(t, err, "the result of step %s is kept in the store", id)
		}
		require.NoDirExists(t, filepath.Join(dir, f.ID), "nothing is kept in files")
		require.NotNil(t, f.Output)
		file := f.Output.File
		require.NotNil(t, file, "the output is too large for the record")
		require.True(t, file.Kept, "the output is kept in the store")
		require.Empty(t, file.Path)
		out, err := f.Output.ReadValue(func(sum string) ([]byte, error) { return h.Host().KeptValue(t.Context(), f.ID, sum) })
		require.NoError(t, err)
		require.True(t, json.Valid(out))
	})
}

// A result too large for one value of the shared store fails the flow,
// saying what to do, instead of failing every pass on the refused value.
func TestAResultOverTheSharedStoresBoundFailsTheFlow(t *testing.T) {
	t.Parallel()
	c := &controller{Controller: pipeline.NewWithOptions(pipeline.Options{DataDir: t.TempDir(), SharedStore: true}), runner: &runner{}}
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "escaped-big.lobster", nil)
		c.runner.next(t, h, f.ID)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Contains(t, f.BlockedSummary, "the gateway's shared store keeps")
		require.Contains(t, f.BlockedSummary, "step ctl")
	})
}
