package pipeline_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// A pass reads a result kept in a file only when the step it runs refers
// to it: with the file of step big damaged once step other started, step
// more (no ref to big) still starts, and step uses (a ref to it) fails
// the flow naming the damage.
func TestKeptResultsAreReadWhenAStepNeedsThem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &controller{Controller: pipeline.NewWithOptions(pipeline.Options{DataDir: dir}), runner: &runner{}}
	h := sdktest.New(t, c)
	f, _ := start(t, h, "lazy.lobster", nil)
	c.runner.next(t, h, f.ID)
	kept, err := filepath.Glob(filepath.Join(dir, f.ID, "*.json"))
	require.NoError(t, err)
	require.Len(t, kept, 1, "the result of step big is kept in a file")
	require.NoError(t, os.WriteFile(kept[0], []byte(`{"id":"big","stdout":"changed"}`), 0o600))

	c.runner.next(t, h, f.ID)
	require.Equal(t, "more", active(t, h, f.ID).Label, "a step that does not refer to big starts")
	before := h.Flow(f.ID).State
	c.runner.next(t, h, f.ID)
	f = h.Flow(f.ID)
	require.Equal(t, sdk.FlowFailed, f.Status, "step uses refers to big, whose file was changed")
	require.Contains(t, f.BlockedSummary, "changed since it was written")
	require.Contains(t, string(before), `"spilled"`, "the unread result stays kept by reference")
}

// Read when needed, a kept result is whole: step uses sees all of big's
// output.
func TestKeptResultIsWholeWhenRead(t *testing.T) {
	t.Parallel()
	c := &controller{Controller: pipeline.NewWithOptions(pipeline.Options{DataDir: t.TempDir()}), runner: &runner{}}
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f, _ := start(t, h, "lazy.lobster", nil)
		for range 4 {
			c.runner.next(t, h, f.ID)
		}
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		require.JSONEq(t, `[20001]`, string(st.Output), "wc -c of big's stdout and its newline")
	})
}
