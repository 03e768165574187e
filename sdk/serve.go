package sdk

import (
	"context"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// Handshake is the go-plugin handshake of flowgate controller plugins:
// Serve uses it, and the gateway passes it as
// plugin.ClientConfig.HandshakeConfig. The cookie only stops people from
// running a plugin binary by hand; it is no security. ProtocolVersion
// changes only with a breaking change of the wire protocol. Do not modify.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "FLOWGATE_PLUGIN",
	MagicCookieValue: "b75f8208e7302fd06ed826dbb7da677462f783b06d7246fa",
}

// LogLevelEnv names the variable that sets Logger's level (trace, debug,
// info, warn, error, off). If unset or unknown, info. The gateway sets it
// to its own level when it starts a plugin.
const LogLevelEnv = "FLOWGATE_LOG_LEVEL"

// parentPollInterval is how often Serve checks that the gateway is alive.
const parentPollInterval = 200 * time.Millisecond

// shutdownOnOrphan bounds the controller's Shutdown when Serve exits
// because the gateway is gone.
const shutdownOnOrphan = 500 * time.Millisecond

// stderr is the process's standard error as it was at start. Serve points
// os.Stderr at a pipe that reaches the gateway as raw output; logs go to
// the real standard error, which the gateway reads as hclog JSON lines and
// re-logs under the plugin's name.
var stderr = os.Stderr

// Logger returns a logger for a controller plugin: hclog JSON lines on the
// process's standard error, which the gateway shows in its own log at the
// right level. Its level comes from LogLevelEnv. Call it once and keep the
// logger. Never print to standard output before Serve: go-plugin's
// handshake is the first line written there.
func Logger() hclog.Logger {
	level := hclog.LevelFromString(os.Getenv(LogLevelEnv))
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{Level: level, Output: stderr, JSONFormat: true})
}

// Serve runs c as a controller plugin until the gateway stops it; call it
// from main. It speaks go-plugin gRPC with Handshake, logs through Logger,
// and exits the process within about a second when the gateway that
// started it dies (its parent process changes), after giving c.Shutdown
// half a second. Run by hand, without the gateway, it says that the binary
// is a plugin and exits 1.
func Serve(c Controller) {
	logger := Logger()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go watchParent(ctx, os.Getppid(), os.Getppid, parentPollInterval, func() {
		shutdownWithin(c, shutdownOnOrphan)
		logger.Warn("the gateway that started this plugin is gone; exiting")
		os.Exit(1)
	})
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         servePluginSet(c, logger),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(maxMessageSize))...)
		},
		Logger: logger,
	})
}

// shutdownWithin calls c.Shutdown and waits for it at most d.
func shutdownWithin(c Controller, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Shutdown(ctx)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
