package wire

import (
	"context"
	"errors"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pb "github.com/flowgate/flowgate/sdk/internal/proto"
)

// PluginName is the name the controller has in the go-plugin plugin set.
const PluginName = "controller"

// MaxMessageSize bounds one request a server of the protocol accepts
// (gRPC's default is 4 MiB; a flow's state may be larger). go-plugin's
// clients already allow the largest messages.
const MaxMessageSize = 64 << 20

// Handshake returns the go-plugin handshake of flowgate controller
// plugins. The cookie only stops people from running a plugin binary by
// hand; it is no security. ProtocolVersion changes only with a breaking
// change of the wire protocol.
func Handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  1,
		MagicCookieKey:   "FLOWGATE_PLUGIN",
		MagicCookieValue: "b75f8208e7302fd06ed826dbb7da677462f783b06d7246fa",
	}
}

// ServerFunc registers a controller's gRPC service in the plugin process.
// go-plugin's broker is not part of the protocol (the Host is served on a
// socket of its own), so it is not passed on.
type ServerFunc func(s *grpc.Server) error

// ClientFunc returns the gateway's client of a controller. doneCtx is
// cancelled by go-plugin when the plugin process exits.
type ClientFunc func(doneCtx context.Context, conn *grpc.ClientConn) (any, error)

// Plugin is the go-plugin plugin of a controller: gRPC only. The plugin
// process sets Serve (sdk.Serve), the gateway sets Connect
// (pluginclient.PluginSet); a set used on both sides in one process, as
// go-plugin's test helpers do, sets both.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	Serve   ServerFunc
	Connect ClientFunc
}

// GRPCServer registers the controller service in the plugin process.
func (p *Plugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Serve == nil {
		return errors.New("no controller to serve: the plugin set comes from pluginclient.PluginSet, which is the gateway's; serve with sdk.Serve or pluginclient.ServePluginSet")
	}
	return p.Serve(s)
}

// GRPCClient returns the gateway's client of the controller.
func (p *Plugin) GRPCClient(doneCtx context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	if p.Connect == nil {
		return nil, errors.New("no controller client: the plugin set is the plugin's; the gateway builds its set with pluginclient.PluginSet")
	}
	return p.Connect(doneCtx, conn)
}

// ServeController returns the ServerFunc that serves c, which must be an
// sdk.Controller, as sdk.Serve does. Package sdk sets it when it is
// initialised (so it is set in every program that can name a
// Controller) and nothing changes it after: it lets sdk/pluginclient
// serve a controller in process, for tests, without package sdk
// exporting go-plugin types.
var ServeController func(c any) ServerFunc

// HostServer returns the gateway's Host service for one plugin instance:
// each call goes to what host returns then, which must be an sdk.Host.
// ControllerClient returns the gateway's client of a plugin's controller
// service on conn, whose methods take and return sdk types. Package sdk
// sets both when it is initialised, as it sets ServeController: the
// gateway's end is written there, beside the plugin's, because sdk alone
// converts between the generated types and its own; sdk/pluginclient
// wires them to go-plugin and the host socket.
var (
	HostServer       func(host func() any) pb.HostServiceServer
	ControllerClient func(conn grpc.ClientConnInterface) any
)
