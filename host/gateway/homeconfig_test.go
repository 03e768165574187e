package gateway_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway"
)

// TestHomeConfig: a gateway reads --config when given, else the home's
// gateway.yaml when it exists, else runs on the defaults; an in-process
// gateway's config is the same without the http listener.
func TestHomeConfig(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	fc, err := gateway.HomeConfig(home, "")
	require.NoError(t, err)
	require.Zero(t, fc, "no file: every default")

	require.NoError(t, os.WriteFile(filepath.Join(home, gateway.ConfigFile), []byte(`limits:
  max_running: 3
diagnoser:
  command: diagnose
http:
  addr: 127.0.0.1:7070
`), 0o600))
	fc, err = gateway.HomeConfig(home, "")
	require.NoError(t, err)
	require.Equal(t, 3, fc.Limits.MaxRunning)
	require.Equal(t, "diagnose", fc.DiagnoserConfig().Command)
	in := fc.InProcess()
	require.Empty(t, in.HTTP.Addr, "the http listener is the daemon's alone")
	require.Equal(t, "diagnose", in.DiagnoserConfig().Command, "an in-process gateway asks the same diagnoser")
	require.Equal(t, "127.0.0.1:7070", fc.HTTP.Addr, "InProcess leaves the daemon's config alone")

	fc, err = gateway.HomeConfig(home, writeConfig(t, "limits:\n  max_running: 5\n"))
	require.NoError(t, err)
	require.Equal(t, 5, fc.Limits.MaxRunning, "--config wins over the home's file")

	require.NoError(t, os.WriteFile(filepath.Join(home, gateway.ConfigFile), []byte("limits: [\n"), 0o600))
	_, err = gateway.HomeConfig(home, "")
	require.ErrorContains(t, err, filepath.Join(home, gateway.ConfigFile))
}
