package sdk

import (
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// PluginSetWithHostOptions is ServePluginSet(c) whose gateway side adds
// opts to the Host server it starts, so tests can watch its connections.
func PluginSetWithHostOptions(c Controller, opts ...grpc.ServerOption) plugin.PluginSet {
	return plugin.PluginSet{pluginName: &controllerPlugin{impl: c, logger: hclog.NewNullLogger(), hostServerOptions: opts}}
}

// WatchParent is watchParent.
var WatchParent = watchParent
