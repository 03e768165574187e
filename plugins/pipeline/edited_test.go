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

// The controller keeps the workflows it parsed (flows.Cache), yet a
// workflow file edited while its flow runs is run as it now stands from
// the next step on, as when every event parsed the file: here an edit to
// the same size, made within the same second, between two steps of two
// flows of the same file.
func TestWorkflowEditedMidRunRunsAsEdited(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "chain.lobster")
	write := func(second string) {
		t.Helper()
		text := "name: chain\nsteps:\n  - id: s0\n    run: echo 0\n  - id: s1\n    run: " + second + "\n"
		require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
	}
	write("echo 1")
	h := sdktest.New(t, pipeline.New())
	a := h.StartFlow("chain", map[string]any{"file": file, "args": map[string]any{}, "cwd": dir})
	b := h.StartFlow("chain", map[string]any{"file": file, "args": map[string]any{}, "cwd": dir})
	r := &runner{}

	r.next(t, h, a.ID)
	require.Equal(t, "echo 1", active(t, h, a.ID).Spec.Shell)

	write("echo 9")
	r.next(t, h, b.ID)
	require.Equal(t, "echo 9", active(t, h, b.ID).Spec.Shell, "the edited file was not read again")
	r.next(t, h, b.ID)
	require.Equal(t, sdk.FlowSucceeded, h.Flow(b.ID).Status)

	// Flow a's second step started before the edit and runs as it was.
	last := r.next(t, h, a.ID)
	require.Equal(t, "echo 1", last.Spec.Shell)
	require.Equal(t, sdk.FlowSucceeded, h.Flow(a.ID).Status)
}
