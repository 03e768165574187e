package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/home"
)

// A part that cannot start (here the runner: its task log directory is
// a file) keeps the whole gateway from starting, with an error that names
// the part; nothing is left serving or holding the store, so the same
// gateway starts once the fault is gone.
func TestAPartThatCannotStartStopsTheGateway(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "fgpart") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	logs := filepath.Join(dir, home.LogsDir)
	require.NoError(t, os.WriteFile(logs, []byte("not a directory"), 0o600))

	g, err := gateway.New(gateway.Config{Home: dir, Launch: testLaunch})
	require.NoError(t, err)
	err = g.Start(ctx)
	require.ErrorContains(t, err, "gateway: runner: start: ")
	require.Equal(t, 1, strings.Count(err.Error(), "runner"), "the error names the part once: %v", err)
	require.ErrorContains(t, err, "create task log directory")
	require.NoFileExists(t, gateway.SocketPath(dir), "a gateway that did not start serves nothing")
	require.NoError(t, g.Stop(ctx), "stopping a gateway that never started does nothing")

	require.NoError(t, os.Remove(logs))
	require.NoError(t, g.Start(ctx), "the store was released: the gateway starts once the fault is gone")
	t.Cleanup(func() { require.NoError(t, g.Stop(ctx)) })
	c, err := api.DialRemote(gateway.SocketPath(dir))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	st, err := c.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, os.Getpid(), st.PID)
}
