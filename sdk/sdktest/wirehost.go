package sdktest

import (
	"context"
	"testing"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/internal/grpctest"
	"github.com/flowgate/flowgate/sdk/pluginclient"
)

// WireHost returns host as a controller plugin is handed it when a
// gateway serves host: every call on the returned Host crosses the real
// protocol (go-plugin's gRPC, in this process, and the Host served back
// on its unix socket) before it reaches host, and every answer and error
// crosses back. Run RunHostConformance on it to check that an sdk.Host
// behaves the same over the wire. The connection ends with the test.
func WireHost(t testing.TB, host sdk.Host) sdk.Host {
	t.Helper()
	catcher := hostCatcher{caught: make(chan sdk.Host, 1)}
	client := grpctest.GRPCConn(t, pluginclient.ServePluginSet(catcher))
	// Close stops the server too (go-plugin's Shutdown RPC); a second
	// Stop would race inside go-plugin.
	t.Cleanup(func() { _ = client.Close() })
	p, err := pluginclient.Connect(t.Context(), client, host)
	if err != nil {
		t.Fatalf("sdktest: connect a controller over gRPC: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := p.Shutdown(ctx); err != nil {
			t.Errorf("sdktest: controller Shutdown: %v", err)
		}
	})
	if err := p.HandleEvent(t.Context(), sdk.Event{FlowID: "catch", Seq: 1, Type: sdk.EventFlowStarted}); err != nil {
		t.Fatalf("sdktest: hand the controller its Host: %v", err)
	}
	return <-catcher.caught
}

// hostCatcher is a controller that keeps the sdk.Host it is handed with
// an event: in a plugin, that is the gRPC client of the gateway's host.
type hostCatcher struct{ caught chan sdk.Host }

func (c hostCatcher) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "wirehost", Version: "1.0.0", APIVersion: sdk.APIVersion}, nil
}

func (c hostCatcher) HandleEvent(_ context.Context, h sdk.Host, _ sdk.Event) error {
	c.caught <- h
	return nil
}

func (hostCatcher) Shutdown(context.Context) error { return nil }
