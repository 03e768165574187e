package shim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner/shim"
)

// closed reports whether c is closed now, without waiting.
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestNotifyExit(t *testing.T) {
	t.Parallel()
	cmd, info := startSleep(t, "sleep")
	exited, stop, err := shim.NotifyExit(info)
	require.NoError(t, err)
	defer stop()
	require.False(t, closed(exited), "the process still runs")

	require.NoError(t, cmd.Process.Kill())
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("no exit notice 30s after the process was killed")
	}
}

func TestNotifyExitReusedPID(t *testing.T) {
	t.Parallel()
	_, info := startSleep(t, "sleep")
	info.StartTime++ // the pid now belongs to another process
	exited, stop, err := shim.NotifyExit(info)
	require.NoError(t, err)
	defer stop()
	require.True(t, closed(exited), "a pid reused by another process counts as exited at once")

	exited, _, err = shim.NotifyExit(shim.ProcInfo{})
	require.NoError(t, err)
	require.True(t, closed(exited), "pid 0 names no process")
}

func TestNotifyExitStopped(t *testing.T) {
	t.Parallel()
	cmd, info := startSleep(t, "sleep")
	exited, stop, err := shim.NotifyExit(info)
	require.NoError(t, err)
	stop()
	stop() // twice is harmless
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	require.False(t, shim.Alive(info))
	require.False(t, closed(exited), "a stopped watch reports nothing")
}
