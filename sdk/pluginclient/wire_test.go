package pluginclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/internal/grpctest"
	"github.com/flowgate/flowgate/sdk/pluginclient"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// probe is a controller that runs handle for each event and hands the
// test the Host it was given.
type probe struct {
	handle func(ctx context.Context, host sdk.Host, ev sdk.Event) error
	hosts  chan sdk.Host
}

func newProbe(handle func(ctx context.Context, host sdk.Host, ev sdk.Event) error) *probe {
	return &probe{handle: handle, hosts: make(chan sdk.Host, 1)}
}

func (p *probe) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "probe", Version: "1.2.3", APIVersion: sdk.APIVersion, Capabilities: []string{"a", "b"}}, nil
}

func (p *probe) HandleEvent(ctx context.Context, host sdk.Host, ev sdk.Event) error {
	select {
	case p.hosts <- host:
	default:
	}
	if p.handle == nil {
		return nil
	}
	return p.handle(ctx, host, ev)
}

func (p *probe) Shutdown(context.Context) error { return nil }

// conn connects c over go-plugin's in-process gRPC connection, serving host
// back to it, and returns the gateway's side.
func conn(t *testing.T, c sdk.Controller, host sdk.Host, opts ...grpc.ServerOption) (pluginclient.Plugin, *plugin.GRPCClient) {
	t.Helper()
	client := grpctest.GRPCConn(t, pluginclient.PluginSetWithHostOptions(c, opts...))
	// Close stops the server too (go-plugin's Shutdown RPC); a second
	// Stop would race inside go-plugin.
	t.Cleanup(func() { _ = client.Close() })
	p, err := pluginclient.Connect(context.Background(), client, host)
	require.NoError(t, err)
	return p, client
}

// remoteHost returns the Host a controller gets when it is connected to
// host over the wire, and the gateway's side of that controller.
func remoteHost(t *testing.T, host sdk.Host, opts ...grpc.ServerOption) (sdk.Host, pluginclient.Plugin, *plugin.GRPCClient) {
	t.Helper()
	pr := newProbe(nil)
	p, client := conn(t, pr, host, opts...)
	require.NoError(t, p.HandleEvent(context.Background(), sdk.Event{FlowID: "f", Seq: 1, Type: sdk.EventFlowStarted}))
	return <-pr.hosts, p, client
}

func ptr[T any](v T) *T { return &v }

// Every Host method crosses the wire and returns what the host returned.
func TestHostRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem := sdktest.NewHost()
	remote, _, _ := remoteHost(t, mem)

	direct := func(id string) *sdk.Flow {
		f, err := mem.GetFlow(ctx, id)
		require.NoError(t, err)
		return f
	}
	f, err := mem.NewFlow("probe", "round trip", json.RawMessage(`{"n":1}`))
	require.NoError(t, err)

	got, err := remote.GetFlow(ctx, f.ID)
	require.NoError(t, err)
	require.Equal(t, direct(f.ID), got)

	req := sdk.TaskRequest{
		FlowID: f.ID, IdempotencyKey: f.ID + ":a", Runtime: "cli", Label: "step a",
		Spec: sdk.TaskSpec{
			Argv: []string{"echo", "hi"}, Env: map[string]string{"K": "V"}, Timeout: sdk.Duration(time.Minute),
			Retry: &sdk.RetryPolicy{MaxAttempts: 3, Backoff: sdk.Duration(time.Second), SafeToRepeat: true},
		},
	}
	task, created, err := remote.CreateTask(ctx, req)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, req.Spec, task.Spec)
	again, created, err := remote.CreateTask(ctx, req)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, task, again)

	tasks, err := remote.ListTasks(ctx, f.ID)
	require.NoError(t, err)
	memTasks, err := mem.ListTasks(ctx, f.ID)
	require.NoError(t, err)
	require.Equal(t, memTasks, tasks)
	require.Equal(t, []*sdk.Task{task}, tasks)

	// nil fields are kept; JSON null is stored as null.
	got, err = remote.UpdateFlow(ctx, f.ID, 1, sdk.FlowUpdate{
		Wait: json.RawMessage(`null`), CurrentStep: ptr("a"), BlockedTaskID: ptr(""), BlockedSummary: ptr("s"),
	})
	require.NoError(t, err)
	require.Equal(t, direct(f.ID), got)
	require.JSONEq(t, `{"n":1}`, string(got.State))
	require.Equal(t, json.RawMessage(`null`), got.Wait)
	require.Equal(t, "a", got.CurrentStep)
	require.Equal(t, "s", got.BlockedSummary)

	got, err = remote.SetWaiting(ctx, f.ID, 2, sdk.WaitRequest{
		CurrentStep: "approve", State: json.RawMessage(`{"n":2}`), Wait: json.RawMessage(`{"kind":"approval"}`),
	})
	require.NoError(t, err)
	require.Equal(t, direct(f.ID), got)
	require.Equal(t, sdk.FlowWaiting, got.Status)
	require.JSONEq(t, `{"kind":"approval"}`, string(got.Wait))

	got, err = remote.SetWaiting(ctx, f.ID, 3, sdk.WaitRequest{BlockedTaskID: task.ID, BlockedSummary: "stuck"})
	require.NoError(t, err)
	require.Equal(t, sdk.FlowBlocked, got.Status)
	require.Equal(t, task.ID, got.BlockedTaskID)

	got, err = remote.Resume(ctx, f.ID, 4, sdk.ResumeRequest{Status: sdk.FlowRunning, CurrentStep: "b", State: json.RawMessage(`null`)})
	require.NoError(t, err)
	require.Equal(t, direct(f.ID), got)
	require.Equal(t, sdk.FlowRunning, got.Status)
	require.Equal(t, json.RawMessage(`null`), got.State)

	got, err = remote.Finish(ctx, f.ID, 5, sdk.EndRequest{CurrentStep: "done", State: json.RawMessage(`{"ok":true}`)})
	require.NoError(t, err)
	require.Equal(t, direct(f.ID), got)
	require.Equal(t, sdk.FlowSucceeded, got.Status)

	f2, err := mem.NewFlow("probe", "fails", nil)
	require.NoError(t, err)
	got, err = remote.Fail(ctx, f2.ID, 1, sdk.EndRequest{BlockedTaskID: "t-x", BlockedSummary: "broke"})
	require.NoError(t, err)
	require.Equal(t, direct(f2.ID), got)
	require.Equal(t, sdk.FlowFailed, got.Status)
	require.Equal(t, "broke", got.BlockedSummary)
	require.Nil(t, got.State, "absent state stays absent")

	f3, err := mem.NewFlow("probe", "cancelled", nil)
	require.NoError(t, err)
	got, err = remote.RequestCancel(ctx, f3.ID, 1)
	require.NoError(t, err)
	require.Equal(t, direct(f3.ID), got)
	require.Equal(t, sdk.FlowCancelled, got.Status)
	require.True(t, got.CancelRequested())

	f4, err := mem.NewFlow("probe", "stop a task", nil)
	require.NoError(t, err)
	queued, _, err := remote.CreateTask(ctx, sdk.TaskRequest{FlowID: f4.ID, IdempotencyKey: "k4", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	stopped, err := remote.CancelTask(ctx, queued.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskCancelled, stopped.Status)
	_, err = remote.CancelTask(ctx, queued.ID)
	require.ErrorIs(t, err, sdk.ErrTerminal, "the sentinel crosses the wire")

	require.NoError(t, remote.Log(ctx, "warn", "careful", map[string]string{"flow_id": f.ID}))
	require.Equal(t, []sdktest.LogEntry{{Level: "warn", Message: "careful", Fields: map[string]string{"flow_id": f.ID}}}, mem.Logs())
}

// errHost answers GetFlow with err; the other methods are not called.
type errHost struct {
	sdk.Host
	err error
}

func (h errHost) GetFlow(context.Context, string) (*sdk.Flow, error) { return nil, h.err }

var sentinels = []error{
	sdk.ErrNotFound, sdk.ErrRevisionConflict, sdk.ErrTerminal, sdk.ErrCancelRequested, sdk.ErrNotManaged,
	sdk.ErrOwnerMismatch, sdk.ErrInvalid, sdk.ErrIllegalTransition, sdk.ErrPluginShutdown,
}

// A host error reaches the controller as the same sentinel, message intact.
func TestErrorsFromHost(t *testing.T) {
	t.Parallel()
	for _, sentinel := range append(sentinels, context.DeadlineExceeded, context.Canceled) {
		t.Run(sentinel.Error(), func(t *testing.T) {
			t.Parallel()
			sent := fmt.Errorf("%w: flow x: do something else", sentinel)
			remote, _, _ := remoteHost(t, errHost{err: sent})
			_, err := remote.GetFlow(context.Background(), "x")
			require.ErrorIs(t, err, sentinel)
			require.EqualError(t, err, sent.Error())
			for _, other := range sentinels {
				if other != sentinel {
					require.NotErrorIs(t, err, other)
				}
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		t.Parallel()
		remote, _, _ := remoteHost(t, errHost{err: errors.New("disk on fire")})
		_, err := remote.GetFlow(context.Background(), "x")
		require.EqualError(t, err, "disk on fire")
		for _, s := range sentinels {
			require.NotErrorIs(t, err, s)
		}
	})
}

// A stale revision reaches the controller as a *RevisionConflictError
// carrying the current flow.
func TestRevisionConflictFromHost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem := sdktest.NewHost()
	remote, _, _ := remoteHost(t, mem)
	f, err := mem.NewFlow("probe", "conflict", nil)
	require.NoError(t, err)
	_, err = mem.UpdateFlow(ctx, f.ID, 1, sdk.FlowUpdate{CurrentStep: ptr("moved")})
	require.NoError(t, err)

	_, err = remote.Finish(ctx, f.ID, 1, sdk.EndRequest{})
	require.ErrorIs(t, err, sdk.ErrRevisionConflict)
	rc, ok := errors.AsType[*sdk.RevisionConflictError](err)
	require.True(t, ok)
	require.EqualValues(t, 1, rc.Expected)
	require.EqualValues(t, 2, rc.Current.Revision)
	require.Equal(t, "moved", rc.Current.CurrentStep)
	require.Equal(t, f.ID, rc.Current.ID)
}

// A controller's error reaches the gateway as the same sentinel.
func TestErrorsFromController(t *testing.T) {
	t.Parallel()
	for _, sentinel := range sentinels {
		t.Run(sentinel.Error(), func(t *testing.T) {
			t.Parallel()
			sent := fmt.Errorf("%w: because", sentinel)
			p, _ := conn(t, newProbe(func(context.Context, sdk.Host, sdk.Event) error { return sent }), sdktest.NewHost())
			err := p.HandleEvent(context.Background(), sdk.Event{FlowID: "f", Seq: 7, Type: sdk.EventTaskFinished})
			require.ErrorIs(t, err, sentinel)
			require.ErrorContains(t, err, sent.Error())
			require.ErrorContains(t, err, "event 7 (task.finished) of flow f")
		})
	}
}

// A conflict the controller got from the host and returned reaches the
// gateway with the current flow.
func TestRevisionConflictFromController(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mem := sdktest.NewHost()
	f, err := mem.NewFlow("probe", "conflict", nil)
	require.NoError(t, err)
	_, err = mem.UpdateFlow(ctx, f.ID, 1, sdk.FlowUpdate{CurrentStep: ptr("moved")})
	require.NoError(t, err)
	p, _ := conn(t, newProbe(func(ctx context.Context, host sdk.Host, ev sdk.Event) error {
		_, err := host.Finish(ctx, ev.FlowID, 1, sdk.EndRequest{})
		return err
	}), mem)

	err = p.HandleEvent(ctx, sdk.Event{FlowID: f.ID, Seq: 1, Type: sdk.EventFlowStarted})
	require.ErrorIs(t, err, sdk.ErrRevisionConflict)
	rc, ok := errors.AsType[*sdk.RevisionConflictError](err)
	require.True(t, ok)
	require.EqualValues(t, 2, rc.Current.Revision)
	require.Equal(t, "moved", rc.Current.CurrentStep)
}

// connCounter counts the connections a gRPC server accepted.
type connCounter struct{ conns atomic.Int32 }

func (c *connCounter) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (c *connCounter) HandleRPC(context.Context, stats.RPCStats)                         {}
func (c *connCounter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (c *connCounter) HandleConn(_ context.Context, s stats.ConnStats) {
	if _, ok := s.(*stats.ConnBegin); ok {
		c.conns.Add(1)
	}
}

// countingHost counts the calls that reach the host.
type countingHost struct {
	sdk.Host
	calls atomic.Int32
}

func (h *countingHost) GetFlow(ctx context.Context, id string) (*sdk.Flow, error) {
	h.calls.Add(1)
	return h.Host.GetFlow(ctx, id)
}

func (h *countingHost) Log(ctx context.Context, level, msg string, fields map[string]string) error {
	h.calls.Add(1)
	return h.Host.Log(ctx, level, msg, fields)
}

// Every callback of every event rides the one connection made in Setup.
func TestOneHostConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	counter := &connCounter{}
	host := &countingHost{Host: sdktest.NewHost()}
	f, err := host.Host.(*sdktest.Host).NewFlow("probe", "many calls", nil)
	require.NoError(t, err)
	p, _ := conn(t, newProbe(func(ctx context.Context, h sdk.Host, ev sdk.Event) error {
		for range 4 {
			if _, err := h.GetFlow(ctx, ev.FlowID); err != nil {
				return err
			}
		}
		return h.Log(ctx, "debug", "handled", nil)
	}), host, grpc.StatsHandler(counter))

	const events = 50
	var wg sync.WaitGroup
	errs := make(chan error, events)
	for i := range events {
		wg.Go(func() {
			errs <- p.HandleEvent(ctx, sdk.Event{FlowID: f.ID, Seq: int64(i + 1), Type: sdk.EventFlowResumed})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.EqualValues(t, events*5, host.calls.Load())
	require.EqualValues(t, 1, counter.conns.Load(), "one host connection for every callback")
}
