package gateway_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/stretchr/testify/require"
)

// TestPluginRestartChecksWhoControlsIt: a plugin whose executable group or
// others could write by the time it crashed is not started again; it is
// left failed, saying what fixes it.
func TestPluginRestartChecksWhoControlsIt(t *testing.T) {
	t.Parallel()
	wrapper := filepath.Join(t.TempDir(), "plugin")
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\nexec "+os.Args[0]+"\n"), 0o700))
	spec := testPlugin("guarded", "stepper", nil)
	spec.Path = wrapper
	_, c := startTestGateway(t, 5, spec)
	waitPlugin(t, c, "guarded", apitype.PluginRunning)
	pid := pluginStatus(t, c, "guarded").PID

	require.NoError(t, os.Chmod(wrapper, 0o777))
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	waitPlugin(t, c, "guarded", apitype.PluginFailed)
	st := pluginStatus(t, c, "guarded")
	require.Contains(t, st.LastError, wrapper+" is writable by group or others (mode 0777)")
	require.Contains(t, st.LastError, "run: chmod go-w "+wrapper)
	require.Equal(t, 0, st.PID, "no process runs")
}
