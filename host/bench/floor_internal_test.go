package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner"
)

// The floor runs a chain's steps as the runner runs tasks, each piping
// the previous step's stdout, with no store: every step exits 0 and the
// last one's stdout is the first one's. The test binary serves as
// "flowgate shim DIR" (TestMain).
func TestChainFloorRunsTheChainsSteps(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	per, err := chainFloor(t.Context(), runner.NewShims(self, nil), dir, 3)
	require.NoError(t, err)
	require.Positive(t, per)
	for _, step := range []string{"1", "2", "3"} {
		out, err := os.ReadFile(filepath.Join(dir, step, "stdout"))
		require.NoError(t, err)
		require.Equal(t, "hello\n", string(out), "stdout of step %s", step)
	}
}
