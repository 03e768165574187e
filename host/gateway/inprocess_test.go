package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	fghome "github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
)

// A controller handed in as Config.Controllers runs in the gateway's
// process: a pipeline runs to the end although the executable that would
// serve it as a plugin does not exist, and it is listed as running in the
// gateway's own process.
func TestControllerInProcessStartsNoPlugin(t *testing.T) {
	t.Parallel()
	home, err := os.MkdirTemp("", "fginp")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	wf := filepath.Join(home, "two.lobster")
	// b prints 10 KB, more than a flow's state keeps inline: the
	// in-process controller keeps it in the home's data directory, as
	// its plugin process would.
	require.NoError(t, os.WriteFile(wf, []byte("name: two\nsteps:\n  - id: a\n    run: yes a | head -c 10000\n  - id: b\n    run: cat\n    stdin: $a.stdout\n"), 0o600))
	g, err := gateway.New(gateway.Config{
		Home: home, Launch: testLaunch, Self: filepath.Join(home, "no-such-flowgate"),
		Builtins:    []string{flows.PipelineController},
		Controllers: map[string]func(func(string) string) sdk.Controller{flows.PipelineController: pipeline.NewFrom},
	})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, g.Start(ctx))
	t.Cleanup(func() { require.NoError(t, g.Stop(ctx)) })
	c := g.Client()

	ps, err := c.Plugins(ctx)
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.Equal(t, flows.PipelineController, ps[0].Name)
	require.Equal(t, apitype.PluginRunning, ps[0].State)
	require.Equal(t, os.Getpid(), ps[0].PID, "the controller runs in the gateway's process")
	state, err := flows.Invocation{File: wf, Cwd: home}.State()
	require.NoError(t, err)
	f, err := c.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "t", ControllerID: flows.PipelineController, Goal: "two", State: state})
	require.NoError(t, err)
	v := waitFlow(t, c, f.ID, "the pipeline to end", func(v apitype.FlowView) bool { return v.Status.Terminal() })
	require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)
	require.Len(t, v.Tasks, 2)
	require.NotNil(t, v.Output)
	require.NotNil(t, v.Output.File, "the output is kept in a file")
	kept, err := os.ReadDir(filepath.Join(home, fghome.DataDir, f.ID))
	require.NoError(t, err, "the data directory is the home's")
	require.NotEmpty(t, kept)
}

// The in-process client tells its followers of every write, so a command
// hosting the gateway sees its task end without waiting for a timer.
func TestInProcessClientSignalsWrites(t *testing.T) {
	t.Parallel()
	home, err := os.MkdirTemp("", "fgchg")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	g, err := gateway.New(gateway.Config{Home: home, Launch: testLaunch})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, g.Start(ctx))
	t.Cleanup(func() { require.NoError(t, g.Stop(ctx)) })
	c, ok := g.Client().(api.Changes)
	require.True(t, ok, "the in-process client offers api.Changes")
	changed := c.Changed()
	_, _, err = g.Client().RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "t", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	require.NoError(t, err)
	<-changed // the test's deadline bounds the wait
}

// A plugins: entry that names a first-party controller with no path
// leaves it in the gateway's process and lends it its env; with
// isolate: true it runs as a plugin process instead (served by Self,
// which here does not exist, so it is not running).
func TestPluginsEntryIsolatesAFirstPartyController(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		isolate   bool
		inProcess bool
	}{"in process": {false, true}, "isolated": {true, false}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			home, err := os.MkdirTemp("", "fgiso")
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(home) })
			var told string
			var fc gateway.FileConfig
			fc.Plugins = []pluginhost.Spec{{Name: flows.PipelineController, Isolate: tc.isolate, Env: map[string]string{"FLOWGATE_TEST_TOLD": "by the entry"}}}
			g, err := gateway.New(gateway.Config{
				Home: home, File: fc, Launch: testLaunch, Self: filepath.Join(home, "no-such-flowgate"),
				Builtins: []string{flows.PipelineController},
				Controllers: map[string]func(func(string) string) sdk.Controller{flows.PipelineController: func(getenv func(string) string) sdk.Controller {
					told = getenv("FLOWGATE_TEST_TOLD")
					return pipeline.NewFrom(getenv)
				}},
			})
			require.NoError(t, err)
			ctx := context.Background()
			require.NoError(t, g.Start(ctx))
			t.Cleanup(func() { require.NoError(t, g.Stop(ctx)) })
			ps, err := g.Client().Plugins(ctx)
			require.NoError(t, err)
			require.Len(t, ps, 1)
			require.Equal(t, tc.inProcess, ps[0].InProcess, "%+v", ps[0])
			if tc.inProcess {
				require.Equal(t, os.Getpid(), ps[0].PID)
				require.Equal(t, "by the entry", told)
				_, err = g.Client().ReloadPlugin(ctx, flows.PipelineController)
				require.ErrorIs(t, err, sdk.ErrInvalid)
				require.ErrorContains(t, err, "runs inside the gateway's process, so it has no process to reload")
				return
			}
			require.NotEqual(t, apitype.PluginRunning, ps[0].State, "no flowgate serves it")
			require.Empty(t, told, "an isolated controller is not made in this process")
		})
	}
}
