package gateway_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// TestReloadBringsBackAFailedPlugin: a plugin that cannot start is left
// failed with its last error once its restart budget is spent; after the
// fault is fixed (its "rebuild"), a reload runs it again with the last
// error and restart count reset, a flow waiting on it completes, and a
// reload of a running plugin replaces its process.
func TestReloadBringsBackAFailedPlugin(t *testing.T) {
	t.Parallel()
	broken := filepath.Join(t.TempDir(), "broken")
	require.NoError(t, os.WriteFile(broken, nil, 0o600))
	_, c := startTestGateway(t, 2, testPlugin("flaky", "broken", map[string]string{"FLOWGATE_TEST_BROKEN": broken, "FLOWGATE_TEST_MARKERS": t.TempDir()}))
	ctx := context.Background()
	waitPlugin(t, c, "flaky", apitype.PluginFailed)
	require.Contains(t, pluginStatus(t, c, "flaky").LastError, "giving up")

	require.NoError(t, os.Remove(broken))
	st, err := c.ReloadPlugin(ctx, "flaky")
	require.NoError(t, err)
	require.Equal(t, apitype.PluginRunning, st.State)
	require.Empty(t, st.LastError, "a reload resets the last error")
	require.Zero(t, st.Restarts)
	require.Positive(t, st.PID)

	f, err := c.CreateFlow(ctx, apitype.CreateFlowInput{ControllerID: "flaky", Goal: "after the fix", OwnerKey: "me"})
	require.NoError(t, err)
	v := waitFlow(t, c, f.ID, "the flow to succeed", func(v apitype.FlowView) bool { return v.Status.Terminal() })
	require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)

	again, err := c.ReloadPlugin(ctx, "flaky")
	require.NoError(t, err)
	require.Equal(t, apitype.PluginRunning, again.State)
	require.NotEqual(t, st.PID, again.PID, "a reload replaces the process")
	require.Greater(t, again.Epoch, st.Epoch)

	_, err = c.ReloadPlugin(ctx, "flakey")
	require.ErrorIs(t, err, sdk.ErrNotFound)
	require.Contains(t, err.Error(), `no plugin named "flakey" is configured in this gateway (it has flaky)`)
}

// TestReloadKeepsAConfigMistake: a reload checks what start checks. An
// executable that is no longer executable fails the reload with the key
// and leaves the running process alone; a plugin that now reports another
// name fails the reload with the key and is left failed.
func TestReloadKeepsAConfigMistake(t *testing.T) {
	t.Parallel()
	renamed := filepath.Join(t.TempDir(), "renamed")
	script := "#!/bin/sh\nif [ -e " + renamed + " ]; then export " + testPluginNameEnv + "=other; fi\nexec " + os.Args[0] + "\n"
	wrapper := filepath.Join(t.TempDir(), "plugin")
	require.NoError(t, os.WriteFile(wrapper, []byte(script), 0o700))
	spec := testPlugin("named", "stepper", nil)
	spec.Path = wrapper
	_, c := startTestGateway(t, 2, spec)
	waitPlugin(t, c, "named", apitype.PluginRunning)
	before := pluginStatus(t, c, "named")

	require.NoError(t, os.Chmod(wrapper, 0o600))
	_, err := c.ReloadPlugin(context.Background(), "named")
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.Contains(t, err.Error(), "plugins[0].path: "+wrapper+` is not executable (plugin "named")`)
	after := pluginStatus(t, c, "named")
	require.Equal(t, apitype.PluginRunning, after.State)
	require.Equal(t, before.PID, after.PID, "the running process is left alone")
	require.NoError(t, os.Chmod(wrapper, 0o700))

	require.NoError(t, os.WriteFile(renamed, nil, 0o600))
	_, err = c.ReloadPlugin(context.Background(), "named")
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.Contains(t, err.Error(), `plugins[0].name: the config names the plugin "named", but the executable `+wrapper+` reports the name "other"`)
	require.Equal(t, apitype.PluginFailed, pluginStatus(t, c, "named").State)
}

// TestCreateFlowRefusesAnUnknownController: the gateway refuses a flow
// for a controller it runs no plugin for, naming the ones it runs, unless
// the input allows it.
func TestCreateFlowRefusesAnUnknownController(t *testing.T) {
	t.Parallel()
	_, c := startTestGateway(t, 2, testPlugin("stepper", "stepper", map[string]string{"FLOWGATE_TEST_MARKERS": t.TempDir()}))
	ctx := context.Background()
	_, err := c.CreateFlow(ctx, apitype.CreateFlowInput{ControllerID: "steper", Goal: "typo", OwnerKey: "me"})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.Contains(t, err.Error(), `controller "steper" is not configured in the running gateway (it runs only stepper)`)
	require.Contains(t, err.Error(), "--allow-unknown-controller")
	views, err := c.ViewFlows(ctx, apitype.FlowFilter{})
	require.NoError(t, err)
	require.Empty(t, views.Flows, "nothing was created")

	f, err := c.CreateFlow(ctx, apitype.CreateFlowInput{ControllerID: "later", Goal: "added later", OwnerKey: "me", AllowUnknownController: true})
	require.NoError(t, err)
	require.Equal(t, "later", f.ControllerID)
}

// TestPluginsDirLoadsWhatPassesTheHandshake: every file of plugins_dir
// that passes the handshake runs, named by what it reports, and drives its
// flows; a script that is no plugin, a file that is not executable and a
// plugin whose name a plugins entry has are skipped, and the gateway
// starts all the same. A plugins_dir that does not exist stops it.
func TestPluginsDirLoadsWhatPassesTheHandshake(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wrap := func(file, name string) {
		script := "#!/bin/sh\nexport " + testPluginEnv + "=stepper " + testPluginNameEnv + "=" + name + " FLOWGATE_TEST_MARKERS=" + t.TempDir() + "\nexec " + os.Args[0] + "\n"
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(script), 0o700))
	}
	wrap("a-plugin", "fromdir")
	wrap("b-plugin", "stepper") // the plugins entry has this name
	require.NoError(t, os.WriteFile(filepath.Join(dir, "not-a-plugin"), []byte("#!/bin/sh\necho hello\n"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("plugins go here\n"), 0o644))

	var fc gateway.FileConfig
	fc.Plugins = []pluginhost.Spec{testPlugin("stepper", "stepper", map[string]string{"FLOWGATE_TEST_MARKERS": t.TempDir()})}
	fc.PluginsDir = dir
	g, home := newTestGatewayFile(t, 2, "", fc)
	require.NoError(t, g.Start(context.Background()))
	c := stopLater(t, g, home)
	ps, err := c.Plugins(context.Background())
	require.NoError(t, err)
	names := make([]string, 0, len(ps))
	for _, p := range ps {
		names = append(names, p.Name)
	}
	require.Equal(t, []string{"fromdir", "stepper"}, names)

	f, err := c.CreateFlow(context.Background(), apitype.CreateFlowInput{ControllerID: "fromdir", Goal: "from the dir", OwnerKey: "me"})
	require.NoError(t, err)
	v := waitFlow(t, c, f.ID, "the flow to succeed", func(v apitype.FlowView) bool { return v.Status.Terminal() })
	require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)

	var none gateway.FileConfig
	none.PluginsDir = filepath.Join(dir, "nope")
	missing, _ := newTestGatewayFile(t, 2, "", none)
	err = missing.Start(context.Background())
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.Contains(t, err.Error(), "plugins_dir: the plugin directory "+filepath.Join(dir, "nope")+" does not exist")
}

// waitPlugin waits until the plugin name is in state.
func waitPlugin(t *testing.T, c api.Client, name string, state apitype.PluginState) {
	t.Helper()
	polltest.Until(t, fmt.Sprintf("plugin %s to become %s", name, state), func() (bool, string) {
		ps, err := c.Plugins(context.Background())
		require.NoError(t, err)
		for _, p := range ps {
			if p.Name == name && p.State == state {
				return true, ""
			}
		}
		return false, fmt.Sprintf("plugins: %+v", ps)
	}, polltest.Within(60*time.Second))
}
