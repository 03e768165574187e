package runner_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/sdk"
)

// maxRSS is the peak resident set of this process, in bytes.
func maxRSS(t *testing.T) int64 {
	t.Helper()
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return ru.Maxrss << 10 // Linux reports KiB
}

// A task that floods stdout costs disk, not the gateway's memory: the
// output goes straight to a file and is digested as a stream. It runs
// alone (not in parallel) so that the memory peak is its own.
func TestStdoutFloodKeepsMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1 GiB to disk")
	}
	const size = 1 << 30
	h := startHome(t, nil)
	before := maxRSS(t)
	task := h.create(h.spec("head -c 1073741824 /dev/zero"))
	got := h.wait(task.ID)
	after := maxRSS(t)
	stdout := filepath.Join(runner.LogDir(h.dir, task.ID, 1), shim.StdoutFile)
	t.Cleanup(func() { _ = os.Remove(stdout) })

	require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
	require.Equal(t, int64(size), got.Result.StdoutBytes)
	// The SHA-256 of 1 GiB of zero bytes.
	require.Equal(t, "49bc20df15e412a64472421e13fe86ff1c5165e18b2afccf160d4dc19fe68a14", got.Result.StdoutSHA256)
	require.Nil(t, got.Result.JSON)
	require.Less(t, after-before, int64(64<<20), "peak RSS grew from %d MiB to %d MiB", before>>20, after>>20)
	require.NoError(t, os.Remove(stdout))
}
