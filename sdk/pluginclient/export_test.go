package pluginclient

import (
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/internal/wire"
)

// PluginSetWithHostOptions is ServePluginSet(c) whose gateway side adds
// opts to the Host server it starts, so tests can watch its connections.
func PluginSetWithHostOptions(c sdk.Controller, opts ...grpc.ServerOption) plugin.PluginSet {
	return servePluginSet(c, opts...)
}

// PluginSetServing is a plugin set whose plugin side registers only what
// register registers (a controller written against the bare protocol, as
// in another language) and whose gateway side is Connect's.
func PluginSetServing(register func(*grpc.Server)) plugin.PluginSet {
	return plugin.PluginSet{wire.PluginName: &wire.Plugin{
		Serve: func(s *grpc.Server) error {
			register(s)
			return nil
		},
		Connect: connectFunc("", nil),
	}}
}
