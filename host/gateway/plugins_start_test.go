package gateway_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// TestPluginSetupIsBoundedByStartTimeout: a plugin that completes the
// handshake but never answers Setup, configured or found in plugins_dir,
// does not hang the gateway's start: after StartTimeout the configured
// one waits to restart with an error naming it, Setup and the timeout,
// and the found one is skipped.
func TestPluginSetupIsBoundedByStartTimeout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := "#!/bin/sh\nexport " + testPluginEnv + "=nosetup GORACE=atexit_sleep_ms=0\nexec " + os.Args[0] + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "hangs"), []byte(script), 0o700))
	var fc gateway.FileConfig
	fc.Plugins = []pluginhost.Spec{testPlugin("mute", "nosetup", nil)}
	fc.PluginsDir = dir
	g, home := newTestGatewayTuned(t, 1, "", fc, func(c *gateway.Config) { c.Supervisor.StartTimeout = time.Second })

	started := make(chan error, 1)
	go func() { started <- g.Start(context.Background()) }()
	select {
	case err := <-started:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("the gateway's start hangs on a plugin that never answers Setup")
	}
	c := stopLater(t, g, home)
	ps, err := c.Plugins(context.Background())
	require.NoError(t, err)
	require.Len(t, ps, 1, "the plugins_dir file is skipped: %+v", ps)
	require.Contains(t, ps[0].LastError, "plugin mute did not answer Setup within 1s")
}

// TestPluginsDirStartsEachFileOnce: a plugins_dir file is started once at
// the gateway's start (the process that reported its name is the one
// that runs), and that process drives its flows with the gateway's host.
func TestPluginsDirStartsEachFileOnce(t *testing.T) {
	t.Parallel()
	dir, starts := t.TempDir(), filepath.Join(t.TempDir(), "starts")
	script := "#!/bin/sh\necho started >> " + starts + "\nexport " + testPluginEnv + "=stepper " + testPluginNameEnv + "=once FLOWGATE_TEST_MARKERS=" + t.TempDir() + " GORACE=atexit_sleep_ms=0\nexec " + os.Args[0] + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "once"), []byte(script), 0o700))
	var fc gateway.FileConfig
	fc.PluginsDir = dir
	g, home := newTestGatewayFile(t, 2, "", fc)
	require.NoError(t, g.Start(context.Background()))
	c := stopLater(t, g, home)

	f, err := c.CreateFlow(context.Background(), apitype.CreateFlowInput{ControllerID: "once", Goal: "from the dir", OwnerKey: "me"})
	require.NoError(t, err)
	v := waitFlow(t, c, f.ID, "the flow to succeed", func(v apitype.FlowView) bool { return v.Status.Terminal() })
	require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)
	b, err := os.ReadFile(starts)
	require.NoError(t, err)
	require.Equal(t, "started\n", string(b), "one start of the file")
	require.Zero(t, pluginStatus(t, c, "once").Restarts)
}

// TestRefusedPluginIsStopped: a plugin whose stages the gateway refuses
// fails the start with the config mistake, and its process does not
// outlive the failed start.
func TestRefusedPluginIsStopped(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := "#!/bin/sh\necho $$ > " + pidFile + "\nexport " + testPluginEnv + "=clash " + testPluginNameEnv + "=clash GORACE=atexit_sleep_ms=0\nexec " + os.Args[0] + "\n"
	wrapper := filepath.Join(t.TempDir(), "clash")
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o700))
	spec := testPlugin("clash", "clash", nil)
	spec.Path = wrapper
	g, _ := newTestGateway(t, 2, "", spec)
	err := g.Start(context.Background())
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.Contains(t, err.Error(), `plugin clash: stage "where" is a built-in stage`)

	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	polltest.Until(t, fmt.Sprintf("go-plugin to reap the refused plugin (pid %d)", pid), func() bool { return syscall.Kill(pid, 0) != nil })
}
