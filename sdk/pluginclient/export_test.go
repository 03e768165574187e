package pluginclient

import (
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/flowgate/flowgate/sdk"
)

// PluginSetWithHostOptions is ServePluginSet(c) whose gateway side adds
// opts to the Host server it starts, so tests can watch its connections.
func PluginSetWithHostOptions(c sdk.Controller, opts ...grpc.ServerOption) plugin.PluginSet {
	return servePluginSet(c, opts...)
}
