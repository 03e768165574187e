package pluginclient

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/internal/wire"
)

// Plugin is a controller plugin instance as the gateway sees it,
// connected by Connect.
//
// Every method fails with an error matching sdk.ErrPluginShutdown once
// the plugin process has exited; other errors are the controller's, with
// the sdk sentinels intact under errors.Is.
type Plugin interface {
	// Info returns the controller's Info.
	Info(ctx context.Context) (sdk.Info, error)
	// HandleEvent delivers one event. nil means the controller handled it
	// and it may be acknowledged. When ctx ends first, the error wraps
	// context.DeadlineExceeded (or context.Canceled).
	HandleEvent(ctx context.Context, ev sdk.Event) error
	// Shutdown asks the controller to stop, then stops serving the Host:
	// callbacks the plugin makes after it fail with sdk.ErrPluginShutdown.
	// Call it with a short deadline before plugin.Client.Kill.
	Shutdown(ctx context.Context) error
	// RunStage runs one of the stages the controller declares in its
	// Info.Stages and returns its output JSON. A stage's failure is an
	// error with the controller's message.
	RunStage(ctx context.Context, call sdk.StageCall) (json.RawMessage, error)
	// Watch runs the controller's sdk.Watcher, which it declares with
	// Info.Watch, until it returns or ctx ends: nil when the watch ended
	// by itself, else its error (sdk.ErrPluginShutdown once the process
	// is gone).
	Watch(ctx context.Context) error
	// BindHost makes host answer the plugin's later callbacks in place of
	// the Host given to Connect; a callback under way finishes on the
	// one it started on. The gateway uses it for a plugin it started
	// before the supervisor that runs it: a Host that refuses every call
	// until the supervisor adopts the process and binds its own.
	BindHost(host sdk.Host)
}

// Handshake returns the go-plugin handshake of flowgate controller
// plugins, the one sdk.Serve answers: pass it as
// plugin.ClientConfig.HandshakeConfig.
func Handshake() plugin.HandshakeConfig { return wire.Handshake() }

// PluginSet returns the plugin set the gateway passes as
// plugin.ClientConfig.Plugins. Use it with Handshake and
// AllowedProtocols []plugin.Protocol{plugin.ProtocolGRPC}, then Connect.
func PluginSet() plugin.PluginSet { return PluginSetIn("") }

// PluginSetIn is PluginSet whose Host sockets are made in socketDir (an
// existing directory only the gateway's user can enter), or in a new
// directory under TMPDIR when socketDir is "".
func PluginSetIn(socketDir string) plugin.PluginSet {
	return plugin.PluginSet{wire.PluginName: &wire.Plugin{Connect: connectFunc(socketDir, nil)}}
}

// ServePluginSet returns a plugin set that serves c as sdk.Serve does and
// also works as the gateway's set. It is for running a controller under
// in-process test helpers (sdk/internal/grpctest, go-plugin's
// plugin.TestPluginGRPCConn), which use one set for both sides. Plugin binaries call
// sdk.Serve.
func ServePluginSet(c sdk.Controller) plugin.PluginSet {
	return servePluginSet(c)
}

// servePluginSet is ServePluginSet whose gateway side adds
// hostServerOptions to the Host server it starts; tests use them to watch
// its connections.
func servePluginSet(c sdk.Controller, hostServerOptions ...grpc.ServerOption) plugin.PluginSet {
	return plugin.PluginSet{wire.PluginName: &wire.Plugin{
		Serve:   wire.ServeController(c),
		Connect: connectFunc("", hostServerOptions),
	}}
}

// connectFunc returns the gateway's side of the go-plugin plugin: a
// pluginClient whose Host server has hostServerOptions added.
func connectFunc(socketDir string, hostServerOptions []grpc.ServerOption) wire.ClientFunc {
	return func(doneCtx context.Context, conn *grpc.ClientConn) (any, error) {
		return &pluginClient{
			calls:             wire.ControllerClient(conn).(controllerCalls),
			conn:              conn,
			doneCtx:           doneCtx,
			hostServerOptions: hostServerOptions,
			socketDir:         socketDir,
		}, nil
	}
}

// Connect makes the controller of a started go-plugin client usable by the
// gateway: it dispenses it from rpc (plugin.Client.Client()), serves host
// to it on a unix socket of its own (in a new 0700 directory under
// os.TempDir) for as long as the instance lives, and calls its Setup with
// the socket's address.
//
// Call it once per plugin instance. host receives every callback the
// plugin makes; it should refuse callbacks once the gateway has replaced
// this instance (return sdk.ErrPluginShutdown). On error, Kill the client.
func Connect(ctx context.Context, rpc plugin.ClientProtocol, host sdk.Host) (Plugin, error) {
	if host == nil {
		return nil, fmt.Errorf("%w: connect a controller plugin: host is nil", sdk.ErrInvalid)
	}
	raw, err := rpc.Dispense(wire.PluginName)
	if err != nil {
		return nil, fmt.Errorf("dispense the controller plugin: %w", err)
	}
	c, ok := raw.(*pluginClient)
	if !ok {
		return nil, fmt.Errorf("%w: the plugin client dispensed a %T, not a controller; build plugin.ClientConfig.Plugins with pluginclient.PluginSet", sdk.ErrInvalid, raw)
	}
	if err := c.setup(ctx, host); err != nil {
		return nil, err
	}
	return c, nil
}
