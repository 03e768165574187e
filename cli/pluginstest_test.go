package cli_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// plugins test reports each case and exits 1 when one fails, 2 when the
// path names no executable.
func TestPluginsTestExitCodes(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	code, out, _ := run(t, home, "plugins", "test", "--timeout", "5s", "/bin/true")
	require.Equal(t, 1, code)
	require.Contains(t, out, "FAIL start: no go-plugin handshake from /bin/true")
	require.Contains(t, out, "0 of 9 cases passed")

	code, _, errOut := run(t, home, "plugins", "test", "./no-such-plugin")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "no-such-plugin is not an executable file")
}
