// Package pluginclient is the gateway's end of the controller plugin
// protocol: it starts nothing itself, but turns a go-plugin client of a
// plugin binary that calls sdk.Serve into a Plugin the gateway can deliver
// events to, and serves the gateway's sdk.Host back to that plugin. It is
// for the gateway (host/pluginhost) and for tests; plugin authors need
// only package sdk.
//
// # Connecting a plugin
//
// Start the binary with plugin.NewClient, passing Handshake as the
// HandshakeConfig, PluginSet as the Plugins and gRPC as the only allowed
// protocol; then call Connect with the client's protocol and the Host that
// answers this instance's callbacks (see the Connect example). Connect
// serves that Host on a unix socket of its own for the instance's life
// and hands its address to the plugin in Setup (docs/protocol.md).
// Every Plugin method fails with sdk.ErrPluginShutdown once the process
// is gone; the controller's own errors arrive as the same sdk sentinels.
//
// # In process
//
// ServePluginSet serves a controller in the test's own process, for
// sdk/internal/grpctest (or go-plugin's plugin.TestPluginGRPCConn, which logs
// at debug level to stderr); package sdk/sdktest uses it to drive a
// controller over the real protocol.
package pluginclient
