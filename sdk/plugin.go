package sdk

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pb "github.com/flowgate/flowgate/sdk/internal/proto"
)

// pluginName is the name the controller has in the go-plugin plugin set.
const pluginName = "controller"

// maxMessageSize bounds one request a server of the protocol accepts
// (gRPC's default is 4 MiB; a flow's state may be larger). go-plugin's
// clients already allow the largest messages.
const maxMessageSize = 64 << 20

// Plugin is a controller plugin instance as the gateway sees it, connected
// by Connect. It is for the gateway; plugin authors do not need it.
//
// Every method fails with an error matching ErrPluginShutdown once the
// plugin process has exited; other errors are the controller's, with the
// sdk sentinels intact under errors.Is.
type Plugin interface {
	// Info returns the controller's Info.
	Info(ctx context.Context) (Info, error)
	// HandleEvent delivers one event. nil means the controller handled it
	// and it may be acknowledged. When ctx ends first, the error wraps
	// context.DeadlineExceeded (or context.Canceled).
	HandleEvent(ctx context.Context, ev Event) error
	// Shutdown asks the controller to stop, then stops serving the Host:
	// callbacks the plugin makes after it fail with ErrPluginShutdown.
	// Call it with a short deadline before plugin.Client.Kill.
	Shutdown(ctx context.Context) error
}

// PluginSet returns the plugin set the gateway passes as
// plugin.ClientConfig.Plugins. It is for the gateway; plugin authors do
// not need it. Use it with HandshakeConfig Handshake and AllowedProtocols
// []plugin.Protocol{plugin.ProtocolGRPC}, then Connect.
func PluginSet() plugin.PluginSet {
	return plugin.PluginSet{pluginName: &controllerPlugin{}}
}

// ServePluginSet returns the plugin set that serves c, as Serve does. It is
// for running a controller under go-plugin's in-process test helpers
// (plugin.TestPluginGRPCConn, which uses one set for both sides, so it also
// works as the gateway's set); sdktest uses it. Plugin binaries call Serve.
func ServePluginSet(c Controller) plugin.PluginSet {
	return servePluginSet(c, Logger())
}

func servePluginSet(c Controller, logger hclog.Logger) plugin.PluginSet {
	return plugin.PluginSet{pluginName: &controllerPlugin{impl: c, logger: logger}}
}

// Connect makes the controller of a started go-plugin client usable by the
// gateway: it dispenses it from rpc (plugin.Client.Client()), serves host
// to it on one brokered connection for as long as the instance lives, and
// calls its Setup. It is for the gateway; plugin authors do not need it.
//
// Call it once per plugin instance. host receives every callback the
// plugin makes; it should refuse callbacks once the gateway has replaced
// this instance (return ErrPluginShutdown). On error, Kill the client.
func Connect(ctx context.Context, rpc plugin.ClientProtocol, host Host) (Plugin, error) {
	if host == nil {
		return nil, fmt.Errorf("%w: connect a controller plugin: host is nil", ErrInvalid)
	}
	raw, err := rpc.Dispense(pluginName)
	if err != nil {
		return nil, fmt.Errorf("dispense the controller plugin: %w", err)
	}
	c, ok := raw.(*pluginClient)
	if !ok {
		return nil, fmt.Errorf("%w: the plugin client dispensed a %T, not a controller; build plugin.ClientConfig.Plugins with sdk.PluginSet", ErrInvalid, raw)
	}
	if err := c.setup(ctx, host); err != nil {
		return nil, err
	}
	return c, nil
}

// controllerPlugin is the go-plugin plugin of a controller: gRPC only.
// impl and logger are set on the plugin side, hostServerOptions only by
// tests.
type controllerPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl              Controller
	logger            hclog.Logger
	hostServerOptions []grpc.ServerOption
}

// GRPCServer registers the controller service in the plugin process.
func (p *controllerPlugin) GRPCServer(broker *plugin.GRPCBroker, s *grpc.Server) error {
	if p.impl == nil {
		return errors.New("no controller to serve: the plugin set comes from sdk.PluginSet, which is the gateway's; serve with sdk.Serve or sdk.ServePluginSet")
	}
	pb.RegisterControllerServer(s, &controllerServer{impl: p.impl, broker: broker, logger: p.logger})
	return nil
}

// GRPCClient returns the gateway's client of the controller. doneCtx is
// cancelled by go-plugin when the plugin process exits.
func (p *controllerPlugin) GRPCClient(doneCtx context.Context, broker *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return &pluginClient{
		client:            pb.NewControllerClient(conn),
		broker:            broker,
		doneCtx:           doneCtx,
		hostServerOptions: p.hostServerOptions,
	}, nil
}
