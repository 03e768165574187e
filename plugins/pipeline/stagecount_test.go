package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// The stage reports stay within their part of the state's bound: a
// workflow of pipeline steps of thousands of stages each succeeds, each
// report listing its first stages and counting the others in "more".
func TestStageReportsStaySmall(t *testing.T) {
	t.Parallel()
	var wf strings.Builder
	wf.WriteString("steps:\n")
	stages := strings.TrimSuffix(strings.Repeat("head | ", 8000), " | ")
	for i := range 4 {
		fmt.Fprintf(&wf, "  - id: step%d\n    pipeline: %s\n", i, stages)
	}
	file := filepath.Join(t.TempDir(), "many-stages.lobster")
	require.NoError(t, os.WriteFile(file, []byte(wf.String()), 0o600))
	c := newControllerWith(pipeline.Options{DataDir: t.TempDir()})
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("many-stages", map[string]any{"file": file, "args": map[string]any{}, "cwd": t.TempDir()})
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		require.Less(t, len(f.State), 64<<10)
		reps, err := sdk.StageReportsOf(f)
		require.NoError(t, err)
		require.Len(t, reps, 4)
		rep := reps["step3"]
		require.NotEmpty(t, rep.Stages)
		require.Equal(t, "head", rep.Stages[0].Name)
		require.Equal(t, 8000, len(rep.Stages)+rep.More)
	})
}
