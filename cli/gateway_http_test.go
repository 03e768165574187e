package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// flowgate gateway refuses --http on a non-loopback address without a
// token, as a usage error that says what to set, before it opens
// anything; the flags override the config file's http section.
func TestGatewayRefusesAnOpenHTTPBind(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	code, _, stderr := run(t, home, "gateway", "--http", "0.0.0.0:7070")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, `http.addr "0.0.0.0:7070" is not a loopback address`)
	require.Contains(t, stderr, "--auth-token")
	require.NoFileExists(t, filepath.Join(home, "flowgate.db"), "nothing was opened")

	config := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(config, []byte("http:\n  addr: 127.0.0.1:7070\n"), 0o600))
	code, _, stderr = run(t, home, "gateway", "--config", config, "--http", "10.0.0.1:7070")
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, `"10.0.0.1:7070" is not a loopback address`, "the flag wins over the file")
}
