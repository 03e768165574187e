package shim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner/shim"
)

// helperWarmEnv makes the test binary run as a warm shim.
const helperWarmEnv = "FLOWGATE_SHIM_TEST_WARM"

func TestWarmShimHelper(t *testing.T) {
	if os.Getenv(helperWarmEnv) != "1" {
		t.Skip("runs only as the warm shim of another test")
	}
	os.Exit(shim.MainWarm())
}

// startWarm starts the test binary as a warm shim.
func startWarm(t *testing.T) *shim.Warm {
	t.Helper()
	w, err := shim.StartWarm(os.Args[0], []string{"-test.run=^TestWarmShimHelper$"}, append(os.Environ(), helperWarmEnv+"=1",
		// Under -race, a process sleeps 1s at exit by default.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")))
	require.NoError(t, err)
	return w
}

// A warm shim handed an attempt is its shim: it claims the attempt under
// its own process, runs the spec with the environment it was handed (not
// the one it started with), and records how it ended.
func TestWarmShimRunsTheAttemptItIsHanded(t *testing.T) {
	t.Parallel()
	w := startWarm(t)
	dir := t.TempDir()
	require.NoError(t, shim.Prepare(dir))
	entry, err := shim.SpecEntry(shim.Spec{Shell: "echo \"$HANDED,$" + helperWarmEnv + "\""})
	require.NoError(t, err)
	p, err := w.Hand(dir, []string{"PATH=" + os.Getenv("PATH"), "HANDED=yes", entry})
	require.NoError(t, err)
	require.Equal(t, w.Process().Pid, p.Pid)
	state, err := p.Wait()
	require.NoError(t, err)
	require.Equal(t, 0, state.ExitCode())

	rec, err := shim.ReadRecord(dir)
	require.NoError(t, err)
	require.NotNil(t, rec.Status, "the warm shim recorded no status")
	require.Equal(t, 0, rec.Status.ExitCode)
	out, err := os.ReadFile(filepath.Join(dir, shim.StdoutFile))
	require.NoError(t, err)
	require.Equal(t, "yes,\n", string(out))
	require.Equal(t, p.Pid, rec.Shim.PID, "the record names the warm shim")
}

// A warm shim whose pipe closes with no attempt on it (the gateway
// stopped or died) exits: Discard, which closes the pipe and reaps the
// shim, returns.
func TestWarmShimWithNoAttemptExits(t *testing.T) {
	t.Parallel()
	w := startWarm(t)
	done := make(chan struct{})
	go func() {
		w.Discard()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(waitLimit):
		_ = w.Process().Kill()
		t.Fatalf("the warm shim %d did not exit within %s of its pipe closing", w.Process().Pid, waitLimit)
	}
}
