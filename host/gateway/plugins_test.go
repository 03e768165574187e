package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/pluginclient"
)

// testPluginEnv makes the test binary serve a controller plugin: "stepper"
// (three tasks, slowly, recording each event it starts on), "exit" (dies
// before the handshake), "garbage" (prints to stdout before the
// handshake), "silent" (never answers HandleEvent), "watcher" (a Watch
// that fails on its first call: watch_test.go), "bench" (one host
// call per event: benchController, plugin_bench_test.go), "broken" (dies
// before the handshake while the file FLOWGATE_TEST_BROKEN exists, else
// stepper).
const testPluginEnv = "FLOWGATE_TEST_PLUGIN"

// testPluginNameEnv is the name a test plugin reports in its Info, so it
// matches its entry in the config; if unset, "stepper".
const testPluginNameEnv = "FLOWGATE_TEST_PLUGIN_NAME"

// stepper drives a flow through three tasks like examples/controllers/hello,
// but pauses in every event so a test can kill it mid-event, and writes a
// marker file for every event it starts handling.
type stepper struct {
	markers string
	delay   time.Duration
}

func (stepper) Info(context.Context) (sdk.Info, error) {
	name := os.Getenv(testPluginNameEnv)
	if name == "" {
		name = "stepper"
	}
	return sdk.Info{Name: name, Version: "test", APIVersion: sdk.APIVersion}, nil
}

func (stepper) Shutdown(context.Context) error { return nil }

func (s stepper) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	_ = os.WriteFile(filepath.Join(s.markers, fmt.Sprintf("%d-%d-%d", os.Getpid(), ev.Seq, ev.Deliveries)), nil, 0o600)
	time.Sleep(s.delay)
	flow, err := h.GetFlow(ctx, ev.FlowID)
	if err != nil || flow.Status.Terminal() {
		return err
	}
	if ev.Type == sdk.EventFlowStarted {
		// A write with a stale revision must come back as a conflict that
		// carries the current flow.
		_, err := h.UpdateFlow(ctx, flow.ID, flow.Revision+7, sdk.FlowUpdate{State: json.RawMessage(`"stale"`)})
		var rc *sdk.RevisionConflictError
		if !errors.Is(err, sdk.ErrRevisionConflict) || !errors.As(err, &rc) || rc.Current.Revision != flow.Revision {
			return fmt.Errorf("stale write: want a revision conflict carrying revision %d, got %v", flow.Revision, err)
		}
	}
	tasks, err := h.ListTasks(ctx, flow.ID)
	if err != nil {
		return err
	}
	done := 0
	for _, t := range tasks {
		if !t.Status.Terminal() {
			return nil
		}
		done++
	}
	if done == 3 {
		_, err := h.Finish(ctx, flow.ID, flow.Revision, sdk.EndRequest{State: json.RawMessage(`{"conflict_seen":true}`)})
		return err
	}
	_, _, err = h.CreateTask(ctx, sdk.TaskRequest{FlowID: flow.ID, IdempotencyKey: fmt.Sprintf("%s:%d", flow.ID, done),
		Label: fmt.Sprint("step ", done+1), Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	return err
}

// clash is stepper declaring a stage named like the built-in "where",
// which a gateway refuses.
type clash struct{ stepper }

func (c clash) Info(ctx context.Context) (sdk.Info, error) {
	info, err := c.stepper.Info(ctx)
	info.Stages = []sdk.Stage{{Name: "where"}}
	return info, err
}

// silent never answers an event.
type silent struct{ stepper }

func (silent) HandleEvent(ctx context.Context, _ sdk.Host, _ sdk.Event) error {
	<-ctx.Done()
	select {} // and ignore the cancel too
}

// serveNoAnswer serves the go-plugin handshake, and a gRPC server on
// which every controller call (Setup first) waits until its caller gives
// up.
func serveNoAnswer() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: pluginclient.Handshake(),
		Plugins:         plugin.PluginSet{"controller": noService{}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.UnknownServiceHandler(func(_ any, s grpc.ServerStream) error {
				<-s.Context().Done()
				return s.Context().Err()
			}))...)
		},
	})
}

// noService is a gRPC plugin that registers no service.
type noService struct{ plugin.NetRPCUnsupportedPlugin }

func (noService) GRPCServer(*plugin.GRPCBroker, *grpc.Server) error { return nil }
func (noService) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("noService serves no client")
}

func servePlugin(mode string) {
	switch mode {
	case "stepper":
		sdk.Serve(stepper{markers: os.Getenv("FLOWGATE_TEST_MARKERS"), delay: 150 * time.Millisecond})
	case "silent":
		sdk.Serve(silent{})
	case "clash":
		sdk.Serve(clash{})
	case "spawner":
		sdk.Serve(spawner{})
	case "watcher":
		sdk.Serve(watcher{ledger: os.Getenv("FLOWGATE_TEST_WATCHES")})
	case "bench":
		sdk.Serve(benchController{})
	case "exit":
		os.Exit(3)
	case "broken":
		if _, err := os.Stat(os.Getenv("FLOWGATE_TEST_BROKEN")); err == nil {
			os.Exit(3)
		}
		servePlugin("stepper")
	case "garbage":
		fmt.Println("hello, I am not a plugin handshake")
		os.Exit(0)
	case "nosetup":
		serveNoAnswer()
	}
	os.Exit(0)
}

// testLaunch runs task shims from the test binary.
func testLaunch(dir string, env []string) (*os.Process, error) {
	return shim.Launch(os.Args[0], []string{dir}, append(env, testShimEnv+"=1", "GORACE=atexit_sleep_ms=0"))
}

// testPlugin is a plugin entry served by this test binary in mode.
func testPlugin(name, mode string, env map[string]string) pluginhost.Spec {
	e := map[string]string{testPluginEnv: mode, testPluginNameEnv: name, "GORACE": "atexit_sleep_ms=0"}
	for k, v := range env {
		e[k] = v
	}
	return pluginhost.Spec{Name: name, Path: os.Args[0], Env: e}
}

// startTestGateway starts an in-process gateway with fast restarts and
// deliveries, and returns a client over its socket.
func startTestGateway(t *testing.T, restartBudget int, specs ...pluginhost.Spec) (*gateway.Gateway, api.Client) {
	t.Helper()
	return startGatewayWith(t, restartBudget, "", specs...)
}

// startTestGatewaySelf is startTestGateway with self as the executable
// that serves first-party plugins.
func startTestGatewaySelf(t *testing.T, self string, specs ...pluginhost.Spec) (*gateway.Gateway, api.Client) {
	t.Helper()
	return startGatewayWith(t, 10, self, specs...)
}

func startGatewayWith(t *testing.T, restartBudget int, self string, specs ...pluginhost.Spec) (*gateway.Gateway, api.Client) {
	t.Helper()
	g, home := newTestGateway(t, restartBudget, self, specs...)
	require.NoError(t, g.Start(context.Background()))
	return g, stopLater(t, g, home)
}

// stopLater stops started gateway g of home when the test ends, and
// returns a client over its socket.
func stopLater(t *testing.T, g *gateway.Gateway, home string) api.Client {
	t.Helper()
	t.Cleanup(func() { require.NoError(t, g.Stop(context.Background())) })
	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// newTestGateway is an unstarted gateway on a fresh home with fast
// restarts and deliveries, and that home.
func newTestGateway(t *testing.T, restartBudget int, self string, specs ...pluginhost.Spec) (*gateway.Gateway, string) {
	t.Helper()
	var fc gateway.FileConfig
	fc.Plugins = specs
	return newTestGatewayFile(t, restartBudget, self, fc)
}

// newTestGatewayFile is newTestGateway with the config file fc.
func newTestGatewayFile(t *testing.T, restartBudget int, self string, fc gateway.FileConfig) (*gateway.Gateway, string) {
	t.Helper()
	return newTestGatewayTuned(t, restartBudget, self, fc, nil)
}

// newTestGatewayTuned is newTestGatewayFile whose config tune changes,
// when not nil, before the gateway is made.
func newTestGatewayTuned(t *testing.T, restartBudget int, self string, fc gateway.FileConfig, tune func(*gateway.Config)) (*gateway.Gateway, string) {
	t.Helper()
	home, err := os.MkdirTemp("", "fgplug")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	cfg := gateway.Config{
		Home: home, File: fc, Launch: testLaunch, Poll: 20 * time.Millisecond, Self: self,
		Logger:     hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr}),
		Supervisor: pluginhost.SupervisorConfig{Backoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, RestartBudget: restartBudget, StartTimeout: 10 * time.Second},
		Delivery:   pluginhost.DeliveryConfig{Backoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, MaxFailures: 4, Timeout: 2 * time.Second, Poll: 20 * time.Millisecond},
	}
	if tune != nil {
		tune(&cfg)
	}
	g, err := gateway.New(cfg)
	require.NoError(t, err)
	return g, home
}

func waitFlow(t *testing.T, c api.Client, id string, what string, cond func(apitype.FlowView) bool) apitype.FlowView {
	t.Helper()
	var v apitype.FlowView
	polltest.Until(t, what, func() (bool, string) {
		var err error
		v, err = c.ViewFlow(context.Background(), id)
		require.NoError(t, err)
		return cond(v), fmt.Sprintf("flow is %s (%s)", v.Status, v.BlockedSummary)
	}, polltest.Within(60*time.Second))
	return v
}

func pluginStatus(t *testing.T, c api.Client, name string) apitype.PluginStatus {
	t.Helper()
	ps, err := c.Plugins(context.Background())
	require.NoError(t, err)
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no plugin %s in %v", name, ps)
	return apitype.PluginStatus{}
}

func TestHelloExampleDrivesAFlow(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "hello")
	out, err := exec.Command("go", "build", "-o", bin, "../../examples/controllers/hello").CombinedOutput()
	require.NoError(t, err, "%s", out)
	_, c := startTestGateway(t, 10, pluginhost.Spec{Name: "hello", Path: bin})

	f, err := c.CreateFlow(context.Background(), apitype.CreateFlowInput{ControllerID: "hello", Goal: "say hello", OwnerKey: "me"})
	require.NoError(t, err)
	v := waitFlow(t, c, f.ID, "the flow to succeed", func(v apitype.FlowView) bool { return v.Status.Terminal() })
	require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)
	require.Len(t, v.Tasks, 3)
	require.JSONEq(t, `{"results":["hello","from","flowgate"]}`, string(v.State))
	p := pluginStatus(t, c, "hello")
	require.Equal(t, apitype.PluginRunning, p.State)
	require.Equal(t, "1.0.0", p.Version)
	require.Positive(t, p.PID)
}

// TestControllerKilledMidEventStillCompletes SIGKILLs the plugin 20 times,
// each time while it is inside HandleEvent; every restart gets the event
// again, and the flow still ends with exactly three tasks.
func TestControllerKilledMidEventStillCompletes(t *testing.T) {
	t.Parallel()
	markers := t.TempDir()
	_, c := startTestGateway(t, 100, testPlugin("stepper", "stepper", map[string]string{"FLOWGATE_TEST_MARKERS": markers}))
	f, err := c.CreateFlow(context.Background(), apitype.CreateFlowInput{ControllerID: "stepper", Goal: "survive", OwnerKey: "me"})
	require.NoError(t, err)

	killed := map[int]bool{}
	deadline := time.Now().Add(90 * time.Second)
	for len(killed) < 20 {
		require.True(t, time.Now().Before(deadline), "killed only %d times", len(killed))
		entries, err := os.ReadDir(markers)
		require.NoError(t, err)
		for _, e := range entries {
			var pid int
			if _, err := fmt.Sscanf(e.Name(), "%d-", &pid); err != nil || killed[pid] {
				continue
			}
			// The plugin is inside HandleEvent: it wrote the marker and
			// sleeps before acting.
			require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
			killed[pid] = true
		}
		time.Sleep(5 * time.Millisecond)
	}
	v := waitFlow(t, c, f.ID, "the flow to succeed", func(v apitype.FlowView) bool { return v.Status.Terminal() })
	require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)
	require.Len(t, v.Tasks, 3, "no duplicate tasks across 20 crashes")
	require.JSONEq(t, `{"conflict_seen":true}`, string(v.State), "the stale write came back as a conflict with the current revision")
	require.GreaterOrEqual(t, pluginStatus(t, c, "stepper").Restarts, 20)
}

// TestBrokenPluginsLeaveTheGatewayRunning configures three broken plugins
// and checks that each shows a clear state and that its flow is blocked
// with the reason, while the gateway keeps serving. (A wrong sha256 is a
// config mistake, which stops the gateway: see
// TestPluginConfigMistakesStopTheGateway.)
func TestBrokenPluginsLeaveTheGatewayRunning(t *testing.T) {
	t.Parallel()
	// A restart budget of 2: a plugin that cannot start is given up on
	// quickly, and only then do its flows count failed deliveries.
	_, c := startTestGateway(t, 2, testPlugin("early", "exit", nil), testPlugin("noisy", "garbage", nil), testPlugin("mute", "silent", nil))

	cases := map[string]struct {
		state   apitype.PluginState
		lastErr string // in plugins list
		flowErr string // in the blocked flow's summary
	}{
		"early": {apitype.PluginFailed, "giving up", "controller early is not running (state failed"},
		"noisy": {apitype.PluginFailed, "giving up", "controller noisy is not running (state failed"},
		"mute":  {apitype.PluginRunning, "", "no answer within 2s"},
	}
	for name, want := range cases {
		f, err := c.CreateFlow(context.Background(), apitype.CreateFlowInput{ControllerID: name, Goal: "g", OwnerKey: name})
		require.NoError(t, err)
		v := waitFlow(t, c, f.ID, name+" blocked", func(v apitype.FlowView) bool { return v.Status == sdk.FlowBlocked })
		require.Contains(t, v.BlockedSummary, want.flowErr, name)
		p := pluginStatus(t, c, name)
		require.Equal(t, want.state, p.State, name)
		require.Contains(t, p.LastError, want.lastErr, name)
	}
	st, err := c.Status(context.Background())
	require.NoError(t, err)
	require.True(t, st.Running)
}

// TestFirstPartyPluginIsServedBySelf runs a plugin with no path: the
// gateway starts its own executable as `plugin serve NAME` (here the test
// binary stands in for flowgate), and the flow completes.
func TestFirstPartyPluginIsServedBySelf(t *testing.T) {
	t.Parallel()
	spec := pluginhost.Spec{Name: "stepper", Env: map[string]string{"FLOWGATE_TEST_MARKERS": t.TempDir()}}
	_, c := startTestGatewaySelf(t, os.Args[0], spec)
	f, err := c.CreateFlow(context.Background(), apitype.CreateFlowInput{ControllerID: "stepper", Goal: "builtin", OwnerKey: "me"})
	require.NoError(t, err)
	v := waitFlow(t, c, f.ID, "the flow to succeed", func(v apitype.FlowView) bool { return v.Status.Terminal() })
	require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)
	require.Len(t, v.Tasks, 3)
}

// TestPluginConfigMistakesStopTheGateway: a plugin path that cannot be
// launched, an executable whose sha256 is not the configured one, or a
// name that differs from the one the plugin reports, fails the gateway's
// Start with an invalid-input error naming the config key and the fix,
// and no gateway is left running.
func TestPluginConfigMistakesStopTheGateway(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notExec := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	renamed := testPlugin("hello", "stepper", nil)
	renamed.Env[testPluginNameEnv] = "stepper"
	badsum := testPlugin("badsum", "stepper", nil)
	badsum.SHA256 = strings.Repeat("0", 64)

	cases := map[string]struct {
		spec pluginhost.Spec
		want string
	}{
		"missing":        {pluginhost.Spec{Name: "gone", Path: filepath.Join(dir, "nope")}, "plugins[1].path: " + filepath.Join(dir, "nope") + ` does not exist (plugin "gone")`},
		"not on PATH":    {pluginhost.Spec{Name: "bare", Path: "flowgate-no-such-plugin"}, `plugins[1].path: no executable "flowgate-no-such-plugin" on PATH`},
		"directory":      {pluginhost.Spec{Name: "dir", Path: dir}, "plugins[1].path: " + dir + " is a directory"},
		"not executable": {pluginhost.Spec{Name: "plain", Path: notExec}, "plugins[1].path: " + notExec + ` is not executable (plugin "plain") (mode -rw-r--r--); chmod +x it`},
		"wrong sha256":   {badsum, "plugins[1].sha256: " + os.Args[0] + " has the sha256 "},
		"other name":     {renamed, `plugins[1].name: the config names the plugin "hello", but the executable ` + os.Args[0] + ` reports the name "stepper": set name: stepper`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The mistake is in the second entry; the first is sound.
			g, home := newTestGateway(t, 10, "", testPlugin("good", "stepper", nil), tc.spec)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := g.Start(ctx)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.ErrorIs(t, err, sdk.ErrInvalid, "a config mistake is invalid input (the CLI exits 2)")
			_, err = os.Stat(gateway.SocketPath(home))
			require.ErrorIs(t, err, os.ErrNotExist, "no gateway is left serving")
			require.NoError(t, g.Stop(ctx))
		})
	}
}
