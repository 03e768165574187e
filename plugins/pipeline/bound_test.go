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

// writeChain writes a workflow of n steps that each echo, to path.
func writeChain(t *testing.T, path string, n int) {
	t.Helper()
	var wf strings.Builder
	wf.WriteString("name: chain\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&wf, "  - id: s%d\n    run: echo %d\n", i, i)
	}
	require.NoError(t, os.WriteFile(path, []byte(wf.String()), 0o600))
}

// A flow's workflow is checked against the state's bound once, in the
// pass that starts its first step, not again in each pass for the first
// step's later events. It shows here as a workflow edited over the
// bound while its first task runs: the flow goes on to the next step.
func TestBoundCheckedOnceBeforeTheFirstStep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "chain.lobster")
	writeChain(t, file, 2)
	h := sdktest.New(t, pipeline.New())
	f := h.StartFlow("chain", map[string]any{"file": file, "args": map[string]any{}, "cwd": dir})
	first := active(t, h, f.ID)

	writeChain(t, file, 5000)
	(&runner{}).run(t, h, first)
	got := h.Flow(f.ID)
	require.Equal(t, sdk.FlowRunning, got.Status, "the bound was checked again after the first step started: %s", got.BlockedSummary)
	require.Equal(t, "s1", got.CurrentStep)
}
