package main_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
)

// brokenPlugin is a plugin that dies before its handshake the way a
// Python one without grpcio does: a traceback on stderr, then exit 3.
const brokenPlugin = `#!/bin/sh
echo 'Traceback (most recent call last):' >&2
echo '  File "plugin.py", line 3, in <module>' >&2
echo "ModuleNotFoundError: No module named 'grpc'" >&2
exit 3
`

// A plugin that fails to start is shown by what it said: plugins test,
// plugins list and the gateway log give its exit status and the last
// lines of its stderr, not go-plugin's guesses about the architecture.
func TestPluginStartFailureShowsItsStderr(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	broken := filepath.Join(work, "broken-plugin")
	require.NoError(t, os.WriteFile(broken, []byte(brokenPlugin), 0o700))
	wantShown := func(what, out string) {
		t.Helper()
		for _, want := range []string{"ModuleNotFoundError: No module named 'grpc'", `File "plugin.py", line 3`, "exit status 3"} {
			require.Contains(t, out, want, "%s shows the plugin's stderr and exit status", what)
		}
		require.NotContains(t, out, "architecture", what)
	}

	out, err := exec.Command(bin, "plugins", "test", "--home", home, "--timeout", "10s", broken).CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit) && exit.ExitCode() == 1, "plugins test fails: %v\n%s", err, out)
	wantShown("plugins test", string(out))

	cfg := filepath.Join(work, "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("plugins:\n  - name: broken\n    path: "+broken+"\n"), 0o600))
	g := startGateway(t, bin, home, logf, "--config", cfg)
	defer g.kill(t)
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	defer c.Close()
	polltest.Until(t, "", func() (bool, string) {
		ps, err := c.Plugins(context.Background())
		require.NoError(t, err)
		for _, p := range ps {
			if p.Name == "broken" && p.LastError != "" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("the plugin's failed start is not recorded yet: %+v", ps)
	}, polltest.Within(20*time.Second), polltest.Every(20*time.Millisecond))
	wantShown("plugins list", flowgate(t, bin, "plugins", "list", "--home", home))
	log, err := os.ReadFile(logf.Name())
	require.NoError(t, err)
	wantShown("the gateway log", string(log))
	require.Contains(t, string(log), "plugin down; restarting", "the log says what the gateway does about it")
}
