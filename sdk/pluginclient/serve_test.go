package pluginclient_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/pluginclient"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// helperEnv makes the test binary a helper process instead of running
// tests: "plugin" serves echo with sdk.Serve; "gateway" starts that plugin
// with go-plugin, prints its pid and blocks until it is killed.
const helperEnv = "FLOWGATE_SDK_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "plugin":
		sdk.Serve(echo{logger: sdk.Logger()})
		os.Exit(0)
	case "gateway":
		os.Exit(runGateway())
	}
	os.Exit(m.Run())
}

// echo stores each event's data as its flow's state and logs it both
// ways: to the gateway's Host and to the plugin's stderr.
type echo struct{ logger hclog.Logger }

func (echo) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "echo", Version: "0.0.1", APIVersion: sdk.APIVersion}, nil
}

func (e echo) HandleEvent(ctx context.Context, host sdk.Host, ev sdk.Event) error {
	f, err := host.GetFlow(ctx, ev.FlowID)
	if err != nil {
		return err
	}
	if _, err := host.UpdateFlow(ctx, f.ID, f.Revision, sdk.FlowUpdate{State: ev.Data}); err != nil {
		return err
	}
	e.logger.Info("echoed an event", "flow_id", ev.FlowID, "seq", ev.Seq)
	return host.Log(ctx, "info", "echoed", map[string]string{"flow_id": ev.FlowID})
}

func (echo) Shutdown(context.Context) error { return nil }

// helperCmd runs the test binary as a helper of the given kind, with this
// process's environment but its own helper kind (go-plugin is told to
// skip the host's environment, which would come last and win). The race
// detector's exit delay is turned off so exits are prompt.
func helperCmd(kind string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, helperEnv+"=") && !strings.HasPrefix(kv, "GORACE=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, helperEnv+"="+kind,
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	return cmd
}

// clientConfig is how the gateway starts a controller plugin.
func clientConfig(cmd *exec.Cmd, logger hclog.Logger, stdout, stderr *syncBuffer) *plugin.ClientConfig {
	return &plugin.ClientConfig{
		HandshakeConfig:  pluginclient.Handshake(),
		Plugins:          pluginclient.PluginSet(),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		SkipHostEnv:      true,
		SyncStdout:       stdout,
		SyncStderr:       stderr,
		StartTimeout:     20 * time.Second,
		Logger:           logger,
	}
}

// runGateway is the "gateway" helper: it starts a plugin, connects it,
// prints the plugin's pid and waits to be killed.
func runGateway() int {
	ctx := context.Background()
	client := plugin.NewClient(clientConfig(helperCmd("plugin"), hclog.NewNullLogger(), &syncBuffer{}, &syncBuffer{}))
	rpc, err := client.Client()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start plugin:", err)
		return 1
	}
	p, err := pluginclient.Connect(ctx, rpc, sdktest.NewHost())
	if err != nil {
		fmt.Fprintln(os.Stderr, "connect plugin:", err)
		return 1
	}
	if _, err := p.Info(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "plugin info:", err)
		return 1
	}
	fmt.Println(client.ReattachConfig().Pid)
	select {}
}

// syncBuffer is a bytes.Buffer safe for go-plugin's writer goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A real plugin process: handshake, Info, an event whose handling calls
// back into the host, the plugin's log lines in the gateway's log,
// Shutdown, and ErrPluginShutdown once the process is gone.
func TestServeSubprocess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	logs := &syncBuffer{}
	logger := hclog.New(&hclog.LoggerOptions{Name: "gateway", Output: logs, Level: hclog.Trace, JSONFormat: true})
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	client := plugin.NewClient(clientConfig(helperCmd("plugin"), logger, stdout, stderr))
	t.Cleanup(client.Kill)

	rpc, err := client.Client()
	require.NoError(t, err)
	mem := sdktest.NewHost()
	p, err := pluginclient.Connect(ctx, rpc, mem)
	require.NoError(t, err)

	info, err := p.Info(ctx)
	require.NoError(t, err)
	require.Equal(t, "echo", info.Name)
	require.Equal(t, sdk.APIVersion, info.APIVersion)

	f, err := mem.NewFlow("echo", "echo", nil)
	require.NoError(t, err)
	require.NoError(t, p.HandleEvent(ctx, sdk.Event{FlowID: f.ID, Seq: 1, Type: sdk.EventFlowStarted, Data: json.RawMessage(`{"hello":"world"}`)}))
	got, err := mem.GetFlow(ctx, f.ID)
	require.NoError(t, err)
	require.EqualValues(t, 2, got.Revision)
	require.JSONEq(t, `{"hello":"world"}`, string(got.State))
	require.Equal(t, []sdktest.LogEntry{{Level: "info", Message: "echoed", Fields: map[string]string{"flow_id": f.ID}}}, mem.Logs())

	err = p.HandleEvent(ctx, sdk.Event{FlowID: "flow-404", Seq: 1, Type: sdk.EventFlowStarted})
	require.ErrorIs(t, err, sdk.ErrNotFound)

	// The plugin's hclog line reaches the gateway's logger as a log line,
	// not as raw output.
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "echoed an event") }, 5*time.Second, 10*time.Millisecond)
	require.NotContains(t, stderr.String(), "echoed an event")

	shutdownCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	require.NoError(t, p.Shutdown(shutdownCtx))
	client.Kill()
	require.True(t, client.Exited())

	err = p.HandleEvent(ctx, sdk.Event{FlowID: f.ID, Seq: 2, Type: sdk.EventFlowResumed})
	require.ErrorIs(t, err, sdk.ErrPluginShutdown)
	_, err = p.Info(ctx)
	require.ErrorIs(t, err, sdk.ErrPluginShutdown)
}

// Run by hand, without the gateway's cookie, a plugin says what it is.
func TestServeWithoutGateway(t *testing.T) {
	t.Parallel()
	out, err := helperCmd("plugin").CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "This binary is a plugin")
}

// When the gateway is SIGKILLed, its idle plugin notices that its parent
// changed and exits within about a second.
func TestPluginExitsWhenGatewayDies(t *testing.T) {
	t.Parallel()
	gw := helperCmd("gateway")
	var gwErr syncBuffer
	gw.Stderr = &gwErr
	out, err := gw.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, gw.Start())
	t.Cleanup(func() {
		_ = gw.Process.Kill()
		_ = gw.Wait()
	})

	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "gateway helper: %s", gwErr.String())
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	require.NoError(t, err)
	require.True(t, alive(pid))
	t.Cleanup(func() {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	require.NoError(t, gw.Process.Kill())
	_ = gw.Wait()
	killed := time.Now()
	require.Eventually(t, func() bool { return !alive(pid) }, 3*time.Second, 20*time.Millisecond,
		"plugin %d still runs after its gateway died", pid)
	took := time.Since(killed)
	t.Logf("plugin exited %v after its gateway was killed", took)
	require.Less(t, took, 1500*time.Millisecond)
}

// alive reports whether process pid exists and is not a zombie (an exited
// process its new parent has not reaped yet).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
