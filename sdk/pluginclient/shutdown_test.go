package pluginclient_test

import (
	"context"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk/internal/grpctest"
	"github.com/flowgate/flowgate/sdk/pluginclient"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// A plugin torn down while Connect sets it up (a gateway stopping while a
// plugin starts) logs nothing and leaves no host socket behind: Connect
// serves the Host on a socket in a directory of its own under TMPDIR,
// which a Setup that fails (here the plugin's connection is closed) must
// remove. Not parallel: it captures the standard logger and sets TMPDIR.
func TestConnectCutShortLogsNothing(t *testing.T) {
	var logged syncBuffer
	log.SetOutput(&logged)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	for i := range 40 {
		client := grpctest.GRPCConn(t, pluginclient.ServePluginSet(newProbe(nil)))
		ctx, cancel := context.WithCancel(context.Background())
		if i%2 == 0 {
			cancel() // the gateway is stopping
		} else {
			_ = client.Close() // the plugin is gone
		}
		_, err := pluginclient.Connect(ctx, client, sdktest.NewHost())
		cancel()
		require.Error(t, err)
		_ = client.Close()
	}
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.HasPrefix(e.Name(), "flowgate-host-"), "a Connect cut short left its host socket directory %s", e.Name())
	}
	require.NotContains(t, logged.String(), "acceptAndServe")
}
