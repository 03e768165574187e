package pipeline_test

import (
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
