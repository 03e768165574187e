package pipeline_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// writeWorkflow writes a workflow file of text and returns its path.
func writeWorkflow(t *testing.T, text string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "wf.lobster")
	require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
	return file
}

// A step's approval keeps its items cut to 192 KiB of JSON in the wait,
// as an approve stage does, so that a parked flow's record fits.
func TestStepApprovalItemsAreBounded(t *testing.T) {
	t.Parallel()
	file := writeWorkflow(t, `steps:
  - id: rows
    run: |
      awk 'BEGIN { printf "["; for (i = 0; i < 500; i++) printf "%s\"%0500d\"", (i ? "," : ""), i; printf "]" }'
    approval: required
`)
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("rows", map[string]any{"file": file, "args": map[string]any{}, "cwd": t.TempDir()})
		require.Equal(t, sdk.FlowRunning, f.Status, f.BlockedSummary)
		c.runner.next(t, h, f.ID)
		f = h.Flow(f.ID)
		w := readWait(t, f)
		require.NotEmpty(t, w.Items)
		var cut struct {
			ItemsTotal     int  `json:"items_total"`
			ItemsTruncated bool `json:"items_truncated"`
		}
		require.NoError(t, json.Unmarshal(f.Wait, &cut))
		require.True(t, cut.ItemsTruncated)
		require.Equal(t, 500, cut.ItemsTotal)
		require.Less(t, len(f.Wait), 200<<10)
	})
}

// A gate too large for the flow's wait (here a 230 KB prompt) fails the
// flow, saying which gate and what to shorten, instead of a write the
// store would refuse.
func TestGateOverTheWaitBoundFails(t *testing.T) {
	t.Parallel()
	file := writeWorkflow(t, fmt.Sprintf("steps:\n  - id: ok\n    pipeline: approve --prompt %s\n", strings.Repeat("p", 230<<10)))
	c := newController()
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("big gate", map[string]any{"file": file, "args": map[string]any{}, "cwd": t.TempDir()})
		require.Equal(t, sdk.FlowFailed, f.Status, string(f.Wait))
		require.Contains(t, f.BlockedSummary, "the gate at step ok/stage0 takes")
		require.Contains(t, f.BlockedSummary, "shorten its prompt")
	})
}
