package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner/shim"
)

// warmShimOf returns the identity of the warm shim ("flowgate-shim
// --warm") started from the flowgate-shim next to bin, waiting boundedly
// for one to appear.
func warmShimOf(t *testing.T, bin string) shim.ProcInfo {
	t.Helper()
	want := []byte(filepath.Join(filepath.Dir(bin), "flowgate-shim") + "\x00" + shim.WarmArg + "\x00")
	deadline := time.Now().Add(20 * time.Second)
	for {
		cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, path := range cmdlines {
			if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, want) {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
				start, err := shim.StartTime(pid)
				if p := (shim.ProcInfo{PID: pid, StartTime: start}); err == nil && shim.Alive(p) {
					return p
				}
			}
		}
		require.True(t, time.Now().Before(deadline), "no warm shim (%q) appeared in 20s", want)
		time.Sleep(20 * time.Millisecond)
	}
}

// A gateway killed with SIGKILL leaves no warm shim behind: the shim
// waiting for the next task sees its pipe close and exits having run
// and written nothing.
func TestWarmShimDiesWithItsGateway(t *testing.T) {
	t.Parallel()
	bin := buildFlowgate(t)
	home, _, logf := e2eDirs(t)
	g := startGateway(t, bin, home, logf)
	// The first task's launch starts the warm shim for the next one.
	out, err := exec.Command(bin, "--home", home, "tasks", "run", "--", "true").CombinedOutput()
	require.NoError(t, err, "tasks run: %s", out)
	warm := warmShimOf(t, bin)
	g.kill(t)
	deadline := time.Now().Add(20 * time.Second)
	for shim.Alive(warm) {
		require.True(t, time.Now().Before(deadline), "the warm shim %d outlived its SIGKILLed gateway by 20s", warm.PID)
		time.Sleep(20 * time.Millisecond)
	}
	logs, err := filepath.Glob(filepath.Join(home, "logs", "*"))
	require.NoError(t, err)
	require.Len(t, logs, 1, "only the task ran; a warm shim with no task writes nothing: %v", logs)
}
