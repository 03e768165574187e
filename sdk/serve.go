package sdk

import (
	"context"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/flowgate/flowgate/sdk/internal/wire"
)

// LogLevelEnv names the variable that sets Logger's level (trace, debug,
// info, warn, error, off). If unset or unknown, info. The gateway sets it
// to its own level when it starts a plugin.
const LogLevelEnv = "FLOWGATE_LOG_LEVEL"

// DataDirEnv names the variable that gives a plugin a directory of its
// own for files too large for a flow's state: a controller keeps what
// belongs to flow F under DataDir/F, and the gateway removes that
// directory when it prunes F. The gateway sets it to $FLOWGATE_HOME/data
// when it starts a plugin; unset means the plugin has no such directory.
const DataDirEnv = "FLOWGATE_DATA_DIR"

// SharedStoreEnv names the variable the gateway sets (to "1") for its
// first-party controllers when its store is one several gateways may
// share (etcd): a flow may then be driven from any of them, so what a
// controller keeps belongs in the store (Host.KeepValue), not in its
// data directory, which is on one machine.
const SharedStoreEnv = "FLOWGATE_SHARED_STORE"

// parentPollInterval is how often Serve checks that the gateway is alive.
const parentPollInterval = 200 * time.Millisecond

// shutdownOnOrphan bounds the controller's Shutdown when Serve exits
// because the gateway is gone.
const shutdownOnOrphan = 500 * time.Millisecond

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
	return hclog.New(&hclog.LoggerOptions{Level: level, Output: processStderr{}, JSONFormat: true})
}

// Serve runs c as a controller plugin until the gateway stops it; call it
// from main. It logs through Logger, and exits the process within about a
// second when the gateway that started it dies (its parent process
// changes), after giving c.Shutdown half a second. Run by hand, without the gateway, it says that the binary
// is a plugin and exits 1.
//
// It speaks go-plugin gRPC, protocol version 1; the gateway connects with
// package sdk/pluginclient.
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
		HandshakeConfig: wire.Handshake(),
		Plugins:         plugin.PluginSet{wire.PluginName: &wire.Plugin{Serve: serveController(c, logger)}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(wire.MaxMessageSize))...)
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
