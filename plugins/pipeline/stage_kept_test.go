package pipeline_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// storeValue stores v under key for workflow file name, as state.set
// would.
func storeValue(t *testing.T, stateDir, name, key string, v any) {
	t.Helper()
	file, err := filepath.Abs(filepath.Join("testdata", name))
	require.NoError(t, err)
	dir := filepath.Join(stateDir, pipeline.StateScope(file))
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, key+".json"), []byte(jsonOf(t, v)), 0o600))
}

// The outputs state.get records are kept in files, as large results are:
// a for_each whose pipeline reads a 600 KB value in its items succeeds with its state small, a later pass replays what an earlier one
// read (the value changed on disk in between), and the output is whole.
func TestLargeStageOutputsAreKeptInFiles(t *testing.T) {
	t.Parallel()
	stateDir, dataDir := t.TempDir(), t.TempDir()
	c := newControllerWith(pipeline.Options{StateDir: stateDir, DataDir: dataDir})
	big := strings.Repeat("x", 600<<10)
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		storeValue(t, stateDir, "stage-big.lobster", "big", big)
		f, _ := start(t, h, "stage-big.lobster", nil)
		c.runner.next(t, h, f.ID) // list
		c.runner.next(t, h, f.ID) // item 0's exec; its state.get reads big
		c.runner.next(t, h, f.ID) // item 1's
		storeValue(t, stateDir, "stage-big.lobster", "big", "small")
		c.runner.next(t, h, f.ID) // item 2's
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		require.Less(t, len(f.State), 64<<10, "the stage outputs are kept in files")
		require.DirExists(t, filepath.Join(dataDir, f.ID))

		out, err := f.Output.ReadValue(nil)
		require.NoError(t, err)
		var rows []map[string]any
		require.NoError(t, json.Unmarshal(out, &rows))
		require.Len(t, rows, 3)
		require.Equal(t, big, rows[0]["get"], "item 0 keeps what its first pass read")
		require.Equal(t, big, rows[1]["get"])
		require.Equal(t, "small", rows[2]["get"])
	})
}

// An approve stage whose items come from a state.get of a 1 MB value
// parks the flow with its items cut to fit the wait, and, approved,
// replays the recorded output from its file and ends with all of it.
func TestApproveOfLargeItemsParksAndResumes(t *testing.T) {
	t.Parallel()
	stateDir := t.TempDir()
	c := newControllerWith(pipeline.Options{StateDir: stateDir, DataDir: t.TempDir()})
	rows := make([]any, 2000)
	for i := range rows {
		rows[i] = strings.Repeat("r", 500)
	}
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		key := subKey(t)
		require.NoError(t, os.MkdirAll(filepath.Join(stateDir, "pipelines"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(stateDir, "pipelines", key+".json"), []byte(jsonOf(t, rows)), 0o600))
		f := h.StartFlow("p", map[string]any{"pipeline": "state.get " + key + " | approve --prompt ok?", "args": map[string]any{}, "cwd": t.TempDir()})
		w := readWait(t, f)
		require.Equal(t, "approval", w.Kind)
		var full struct {
			ItemsTotal     int  `json:"items_total"`
			ItemsTruncated bool `json:"items_truncated"`
		}
		require.NoError(t, json.Unmarshal(f.Wait, &full))
		require.True(t, full.ItemsTruncated)
		require.Equal(t, 1, full.ItemsTotal)
		require.Less(t, len(f.State), 64<<10)

		f = decide(t, h, f.ID, w.Step, map[string]any{"approved": true})
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		out, err := f.Output.ReadValue(nil)
		require.NoError(t, err)
		require.JSONEq(t, jsonOf(t, rows), string(out))
	})
}
