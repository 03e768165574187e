// Package grpctest connects a gateway to a controller served in the
// test's own process over the real protocol (go-plugin's gRPC, in
// process). It is for the sdk's tests and sdktest's harness: it shows
// go-plugin's types, which plugin authors never need (sdktest.New and
// sdktest.WireHost wrap it).
package grpctest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/flowgate/flowgate/sdk/internal/wire"
)

// GRPCConn serves ps in this process, as a plugin binary serves it, and
// connects to it over gRPC as the gateway does: it is go-plugin's
// TestPluginGRPCConn with go-plugin's own logs, on both sides, sent to
// t.Log at warn level (TestPluginGRPCConn writes them to stderr at debug
// level, which floods go test -v). Build ps with pluginclient.ServePluginSet.
// Closing the returned client stops the server too; the connection is
// closed when the test ends.
func GRPCConn(t testing.TB, ps plugin.PluginSet) *plugin.GRPCClient {
	t.Helper()
	log := Logger(t)
	ctx, cancel := context.WithCancel(context.Background())
	reattach := make(chan *plugin.ReattachConfig, 1)
	served := make(chan struct{})
	go plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: wire.Handshake(),
		Plugins:         ps,
		GRPCServer:      plugin.DefaultGRPCServer,
		Logger:          log,
		Test:            &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: reattach, CloseCh: served},
	})
	var rc *plugin.ReattachConfig
	select {
	case rc = <-reattach:
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("grpctest: the in-process plugin server did not start within 10s")
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  wire.Handshake(),
		Plugins:          ps,
		Reattach:         rc,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           log,
	})
	t.Cleanup(func() {
		// Kill asks the server to stop (the plugin's Shutdown call), and
		// the server then ends Serve. Cancelling Serve's context as well
		// would make go-plugin stop the same server a second time, from
		// another goroutine: a data race inside go-plugin. So cancel only
		// if the server has not ended by itself.
		client.Kill()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			cancel()
			<-served
		}
		cancel()
	})
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("grpctest: connect to the in-process plugin server: %v", err)
	}
	g, ok := rpc.(*plugin.GRPCClient)
	if !ok {
		t.Fatalf("grpctest: the plugin client is a %T, not gRPC", rpc)
	}
	return g
}

// Logger returns an hclog logger that writes to t.Log at warn level and
// above, and drops what is logged after the test ends (go-plugin's
// goroutines may still log while they stop).
func Logger(t testing.TB) hclog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(w.close)
	return hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Warn, Output: w})
}

// testWriter is an io.Writer onto t.Log until close.
type testWriter struct {
	t      testing.TB
	mu     sync.Mutex
	closed bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
}
