package pluginclient_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// rpcCounter counts the calls a gRPC server received, by method.
type rpcCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *rpcCounter) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[info.FullMethodName]++
	return ctx
}
func (c *rpcCounter) HandleRPC(context.Context, stats.RPCStats)                         {}
func (c *rpcCounter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (c *rpcCounter) HandleConn(context.Context, stats.ConnStats)                       {}

func (c *rpcCounter) count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls["/flowgate.controller.v1.HostService/"+method]
}

// The flow goes with its event, so a controller's first read of it costs
// no round trip, and reads the flow as the host has it.
func TestTheFirstReadOfAnEventsFlowNeedsNoRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem := sdktest.NewHost()
	f, err := mem.NewFlow("probe", "read first", []byte(`{"step":"one"}`))
	require.NoError(t, err)
	f, err = mem.UpdateFlow(ctx, f.ID, f.Revision, sdk.FlowUpdate{CurrentStep: ptr("two")})
	require.NoError(t, err)
	counter := &rpcCounter{}
	var got [2]*sdk.Flow
	p, _ := conn(t, newProbe(func(ctx context.Context, host sdk.Host, ev sdk.Event) error {
		for i := range got {
			var err error
			if got[i], err = host.GetFlow(ctx, ev.FlowID); err != nil {
				return err
			}
		}
		return nil
	}), mem, grpc.StatsHandler(counter))

	require.NoError(t, p.HandleEvent(ctx, sdk.Event{FlowID: f.ID, Seq: 1, Type: sdk.EventFlowStarted}))
	require.Equal(t, 1, counter.count("GetFlow"), "the first read came with the event, the second crossed")
	for _, g := range got {
		require.Equal(t, f.ID, g.ID)
		require.Equal(t, f.Revision, g.Revision)
		require.Equal(t, "two", g.CurrentStep)
		require.JSONEq(t, `{"step":"one"}`, string(g.State))
	}
	require.NotSame(t, got[0], got[1])
}

// Only a first call is answered from the event's flow: a read after a
// write, or of another flow, crosses and sees what the host has.
func TestOnlyTheFirstCallIsAnsweredFromTheEventsFlow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem := sdktest.NewHost()
	f, err := mem.NewFlow("probe", "write first", nil)
	require.NoError(t, err)
	other, err := mem.NewFlow("probe", "another", nil)
	require.NoError(t, err)
	counter := &rpcCounter{}
	var afterWrite, otherRead *sdk.Flow
	p, _ := conn(t, newProbe(func(ctx context.Context, host sdk.Host, ev sdk.Event) error {
		var err error
		if ev.Seq == 1 {
			if _, err = host.UpdateFlow(ctx, ev.FlowID, f.Revision, sdk.FlowUpdate{CurrentStep: ptr("written")}); err != nil {
				return err
			}
			afterWrite, err = host.GetFlow(ctx, ev.FlowID)
			return err
		}
		otherRead, err = host.GetFlow(ctx, other.ID)
		return err
	}), mem, grpc.StatsHandler(counter))

	require.NoError(t, p.HandleEvent(ctx, sdk.Event{FlowID: f.ID, Seq: 1, Type: sdk.EventFlowStarted}))
	require.Equal(t, "written", afterWrite.CurrentStep, "a read after a write sees the write")
	require.Equal(t, f.Revision+1, afterWrite.Revision)
	require.Equal(t, 1, counter.count("GetFlow"))

	require.NoError(t, p.HandleEvent(ctx, sdk.Event{FlowID: f.ID, Seq: 2, Type: sdk.EventFlowResumed}))
	require.Equal(t, other.ID, otherRead.ID, "a read of another flow is that flow's")
	require.Equal(t, 2, counter.count("GetFlow"))
}

// A flow the gateway cannot read goes as none, and the controller's read
// meets the host's error.
func TestAnEventWhoseFlowCannotBeReadGoesWithout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	counter := &rpcCounter{}
	p, _ := conn(t, newProbe(func(ctx context.Context, host sdk.Host, ev sdk.Event) error {
		_, err := host.GetFlow(ctx, ev.FlowID)
		return err
	}), sdktest.NewHost(), grpc.StatsHandler(counter))

	err := p.HandleEvent(ctx, sdk.Event{FlowID: "gone", Seq: 1, Type: sdk.EventFlowStarted})
	require.ErrorIs(t, err, sdk.ErrNotFound)
	require.Equal(t, 1, counter.count("GetFlow"))
}
