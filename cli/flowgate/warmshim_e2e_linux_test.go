package main_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner/shim"
)

// warmShimOf returns the identity of the warm shim ("flowgate-shim
// --warm") started from the flowgate-shim next to bin, waiting boundedly
// for one to appear.
func warmShimOf(t *testing.T, bin string) shim.ProcInfo {
	t.Helper()
	want := []byte(filepath.Join(filepath.Dir(bin), "flowgate-shim") + "\x00" + shim.WarmArg + "\x00")
	var warm shim.ProcInfo
	polltest.Until(t, "", func() (bool, string) {
		cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, path := range cmdlines {
			if b, err := os.ReadFile(path); err == nil && bytes.Equal(b, want) {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
				start, err := shim.StartTime(pid)
				if warm = (shim.ProcInfo{PID: pid, StartTime: start}); err == nil && shim.Alive(warm) {
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("no warm shim (%q) appeared", want)
	}, polltest.Within(20*time.Second), polltest.Every(20*time.Millisecond))
	return warm
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
	flowgate(t, bin, "--home", home, "tasks", "run", "--", "true")
	warm := warmShimOf(t, bin)
	g.kill(t)
	polltest.Until(t, fmt.Sprintf("the warm shim %d to exit with its SIGKILLed gateway", warm.PID), func() bool { return !shim.Alive(warm) }, polltest.Within(20*time.Second), polltest.Every(50*time.Millisecond))
	logs, err := filepath.Glob(filepath.Join(home, "logs", "*"))
	require.NoError(t, err)
	require.Len(t, logs, 1, "only the task ran; a warm shim with no task writes nothing: %v", logs)
}
