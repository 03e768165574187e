package pluginclient_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// watching is a probe that declares Watch; its Watch creates a flow keyed
// "seen" and answers with err.
type watching struct {
	*probe
	err error
}

func (w watching) Info(ctx context.Context) (sdk.Info, error) {
	info, err := w.probe.Info(ctx)
	info.Watch = true
	return info, err
}

func (w watching) Watch(ctx context.Context, h sdk.Host) error {
	if _, _, err := h.CreateFlow(ctx, sdk.FlowRequest{IdempotencyKey: "seen", Goal: "g", OwnerKey: "me"}); err != nil {
		return err
	}
	return w.err
}

// Info.Watch crosses the wire, Watch runs with the instance's host, and
// its error reaches the gateway with the sentinel intact.
func TestWatchOverTheWire(t *testing.T) {
	t.Parallel()
	host := sdktest.NewHost()
	p, _ := conn(t, watching{probe: newProbe(nil)}, host)
	info, err := p.Info(t.Context())
	require.NoError(t, err)
	require.True(t, info.Watch)
	require.NoError(t, p.Watch(t.Context()))
	_, err = host.CreatedFlow("seen")
	require.NoError(t, err, "the watch created its flow through the host")

	p, _ = conn(t, watching{probe: newProbe(nil), err: errors.Join(sdk.ErrUnavailable, errors.New("queue down"))}, sdktest.NewHost())
	err = p.Watch(t.Context())
	require.ErrorIs(t, err, sdk.ErrUnavailable)
	require.ErrorContains(t, err, "queue down")
}

// A controller that declares Watch without implementing sdk.Watcher is
// refused at GetInfo, with what to do; one that declares none is not
// watched, and a Watch call to it says so.
func TestWatchDeclaredButNotImplemented(t *testing.T) {
	t.Parallel()
	p, _ := conn(t, declaresWatch{newProbe(nil)}, sdktest.NewHost())
	_, err := p.Info(t.Context())
	require.ErrorContains(t, err, "declares Info.Watch but does not implement sdk.Watcher")

	p, _ = conn(t, newProbe(nil), sdktest.NewHost())
	require.ErrorContains(t, p.Watch(t.Context()), "does not implement sdk.Watcher")
}

// declaresWatch sets Info.Watch but has no Watch method.
type declaresWatch struct{ *probe }

func (d declaresWatch) Info(ctx context.Context) (sdk.Info, error) {
	info, err := d.probe.Info(ctx)
	info.Watch = true
	return info, err
}
