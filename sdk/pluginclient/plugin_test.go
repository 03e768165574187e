package pluginclient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/internal/grpctest"
	"github.com/flowgate/flowgate/sdk/pluginclient"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

func TestConnectInfo(t *testing.T) {
	t.Parallel()
	p, _ := conn(t, newProbe(nil), sdktest.NewHost())
	info, err := p.Info(context.Background())
	require.NoError(t, err)
	require.Equal(t, sdk.Info{Name: "probe", Version: "1.2.3", APIVersion: sdk.APIVersion, Capabilities: []string{"a", "b"}}, info)
}

func TestConnectRefusesNilHost(t *testing.T) {
	t.Parallel()
	client := grpctest.GRPCConn(t, pluginclient.ServePluginSet(newProbe(nil)))
	// Close stops the server too (go-plugin's Shutdown RPC); a second
	// Stop would race inside go-plugin.
	t.Cleanup(func() { _ = client.Close() })
	_, err := pluginclient.Connect(context.Background(), client, nil)
	require.ErrorIs(t, err, sdk.ErrInvalid)
}

// The gateway's deadline reaches the controller, and the gateway gets an
// error wrapping context.DeadlineExceeded.
func TestHandleEventDeadline(t *testing.T) {
	t.Parallel()
	sawDeadline := make(chan bool, 1)
	p, _ := conn(t, newProbe(func(ctx context.Context, _ sdk.Host, _ sdk.Event) error {
		_, ok := ctx.Deadline()
		sawDeadline <- ok
		<-ctx.Done()
		return ctx.Err()
	}), sdktest.NewHost())

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := p.HandleEvent(ctx, sdk.Event{FlowID: "f", Seq: 1, Type: sdk.EventFlowStarted})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, sdk.ErrPluginShutdown)
	require.Less(t, time.Since(start), 5*time.Second)
	require.True(t, <-sawDeadline, "the controller's context carries the deadline")
}

// A panicking controller fails the event and keeps serving.
func TestHandleEventPanic(t *testing.T) {
	t.Parallel()
	p, _ := conn(t, newProbe(func(_ context.Context, _ sdk.Host, ev sdk.Event) error {
		if ev.Seq == 1 {
			panic("bad event")
		}
		return nil
	}), sdktest.NewHost())
	err := p.HandleEvent(context.Background(), sdk.Event{FlowID: "f", Seq: 1, Type: sdk.EventFlowStarted})
	require.ErrorContains(t, err, "controller panicked handling event 1 (flow.started) of flow f: bad event")
	require.NoError(t, p.HandleEvent(context.Background(), sdk.Event{FlowID: "f", Seq: 2, Type: sdk.EventFlowResumed}))
}

// Without Setup there is no Host, and an event is refused.
func TestHandleEventBeforeSetup(t *testing.T) {
	t.Parallel()
	client := grpctest.GRPCConn(t, pluginclient.ServePluginSet(newProbe(nil)))
	// Close stops the server too (go-plugin's Shutdown RPC); a second
	// Stop would race inside go-plugin.
	t.Cleanup(func() { _ = client.Close() })
	raw, err := client.Dispense("controller")
	require.NoError(t, err)
	err = raw.(pluginclient.Plugin).HandleEvent(context.Background(), sdk.Event{FlowID: "f", Seq: 1})
	require.ErrorContains(t, err, "before Setup")
}

// After Shutdown the controller's Host is closed on both sides.
func TestHostAfterShutdown(t *testing.T) {
	t.Parallel()
	remote, p, _ := remoteHost(t, sdktest.NewHost())
	require.NoError(t, p.Shutdown(context.Background()))
	_, err := remote.GetFlow(context.Background(), "f")
	require.ErrorIs(t, err, sdk.ErrPluginShutdown)
}

// When the gateway's side goes away (the broker closes, as on Kill), the
// controller's Host calls fail with ErrPluginShutdown, and so do the
// gateway's calls.
func TestHostAfterConnectionLoss(t *testing.T) {
	t.Parallel()
	remote, p, client := remoteHost(t, sdktest.NewHost())
	require.NoError(t, client.Close())
	require.Eventually(t, func() bool {
		_, err := remote.GetFlow(context.Background(), "f")
		return errors.Is(err, sdk.ErrPluginShutdown)
	}, 5*time.Second, 10*time.Millisecond)
	err := p.HandleEvent(context.Background(), sdk.Event{FlowID: "f", Seq: 2})
	require.Error(t, err)
}
