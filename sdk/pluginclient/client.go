package pluginclient

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"

	"github.com/flowgate/flowgate/sdk"
	pb "github.com/flowgate/flowgate/sdk/internal/proto"
	"github.com/flowgate/flowgate/sdk/internal/wire"
)

// controllerCalls is the gateway's client of a plugin's controller
// service, as package sdk implements it (wire.ControllerClient): the
// conversions to and from the protocol's types are sdk's alone.
type controllerCalls interface {
	Setup(ctx context.Context, hostAddress string) error
	Info(ctx context.Context) (sdk.Info, error)
	HandleEvent(ctx context.Context, ev sdk.Event, f *sdk.Flow) error
	Shutdown(ctx context.Context) error
	RunStage(ctx context.Context, call sdk.StageCall) (json.RawMessage, error)
	Watch(ctx context.Context) error
}

// boundHost holds the Host a plugin's callbacks go to.
type boundHost struct{ sdk.Host }

// pluginClient is the gateway's side of one controller plugin instance. It
// serves the gateway's Host to the plugin on a unix socket of its own,
// started by setup and stopped by Shutdown or when the plugin process
// exits.
type pluginClient struct {
	calls controllerCalls
	// doneCtx is cancelled by go-plugin when the plugin process exits.
	doneCtx context.Context
	// hostServerOptions are added to the Host server's options; tests use
	// them to watch its connections.
	hostServerOptions []grpc.ServerOption
	// socketDir is where the Host's socket is made ("": a new directory
	// under TMPDIR).
	socketDir string

	// conn is the connection to the plugin; its shutdown ends the Host.
	conn *grpc.ClientConn
	// host answers the plugin's callbacks (see BindHost).
	host atomic.Pointer[boundHost]

	mu      sync.Mutex
	hostSrv *grpc.Server
	hostLn  *hostListener
	// stopWatch ends stopHostWhenGone once the Host is stopped.
	stopWatch context.CancelFunc
}

var _ Plugin = (*pluginClient)(nil)

// err is a call's error, or sdk.ErrPluginShutdown once the plugin process
// is gone.
func (c *pluginClient) err(err error) error {
	if err == nil {
		return nil
	}
	if c.doneCtx.Err() != nil {
		return fmt.Errorf("%w: the controller plugin process exited", sdk.ErrPluginShutdown)
	}
	return err
}

// setup serves host on a unix socket of its own (see listenHost) and
// sends the socket's address to the plugin, which dials it once. The
// socket is served until stopHost; go-plugin's broker is not used, so a
// plugin in any language reaches the Host with its stock gRPC library.
func (c *pluginClient) setup(ctx context.Context, host sdk.Host) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: serve the host to the controller plugin: %v", sdk.ErrPluginShutdown, err)
	}
	ln, err := listenHost(c.socketDir)
	if err != nil {
		return err
	}
	c.BindHost(host)
	opts := append([]grpc.ServerOption{grpc.MaxRecvMsgSize(wire.MaxMessageSize), grpc.ChainUnaryInterceptor(codeTrailer)}, c.hostServerOptions...)
	s := grpc.NewServer(opts...)
	pb.RegisterHostServiceServer(s, wire.HostServer(func() any { return c.host.Load().Host }))
	watch, stopWatch := context.WithCancel(c.doneCtx)
	c.mu.Lock()
	c.hostSrv, c.hostLn, c.stopWatch = s, ln, stopWatch
	c.mu.Unlock()
	go func() { _ = s.Serve(ln) }() // returns when stopHost stops s, closing ln
	go c.stopHostWhenGone(watch)
	if err := c.calls.Setup(ctx, ln.target()); err != nil {
		c.stopHost()
		return fmt.Errorf("set up the controller plugin: %w", c.err(err))
	}
	return nil
}

// BindHost implements Plugin.
func (c *pluginClient) BindHost(host sdk.Host) { c.host.Store(&boundHost{host}) }

// stopHost stops serving the Host and removes its socket: the plugin's
// later callbacks fail with ErrPluginShutdown.
func (c *pluginClient) stopHost() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hostSrv != nil {
		c.hostSrv.Stop()
	}
	if c.hostLn != nil {
		c.hostLn.remove()
	}
	if c.stopWatch != nil {
		c.stopWatch()
	}
}

// stopHostWhenGone stops serving the Host when the plugin is gone: its
// process exited (doneCtx, under watch) or its connection was closed (as
// plugin.Client.Kill and GRPCClient.Close do). It returns when watch ends.
func (c *pluginClient) stopHostWhenGone(watch context.Context) {
	for st := c.conn.GetState(); st != connectivity.Shutdown; st = c.conn.GetState() {
		if !c.conn.WaitForStateChange(watch, st) {
			break
		}
	}
	c.stopHost()
}

// Info implements Plugin.
func (c *pluginClient) Info(ctx context.Context) (sdk.Info, error) {
	info, err := c.calls.Info(ctx)
	return info, c.err(err)
}

// HandleEvent implements Plugin. The event goes with its flow as the
// bound Host reads it, which a controller built with this sdk takes as
// the answer to its first GetFlow: most controllers read their flow
// first, and this saves that round trip. A flow that cannot be read goes
// as none; the controller's own read then meets the error.
func (c *pluginClient) HandleEvent(ctx context.Context, ev sdk.Event) error {
	var f *sdk.Flow
	if h := c.host.Load(); h != nil { // nil before setup, which the plugin refuses
		if read, err := h.GetFlow(ctx, ev.FlowID); err == nil {
			f = read
		}
	}
	if err := c.calls.HandleEvent(ctx, ev, f); err != nil {
		return fmt.Errorf("event %d (%s) of flow %s: %w", ev.Seq, ev.Type, ev.FlowID, c.err(err))
	}
	return nil
}

// Shutdown implements Plugin.
func (c *pluginClient) Shutdown(ctx context.Context) error {
	err := c.calls.Shutdown(ctx)
	c.stopHost()
	return c.err(err)
}

// RunStage implements Plugin.
func (c *pluginClient) RunStage(ctx context.Context, call sdk.StageCall) (json.RawMessage, error) {
	out, err := c.calls.RunStage(ctx, call)
	if err != nil {
		return nil, c.err(err)
	}
	return out, nil
}

// Watch implements Plugin.
func (c *pluginClient) Watch(ctx context.Context) error {
	if err := c.calls.Watch(ctx); err != nil {
		return fmt.Errorf("watch: %w", c.err(err))
	}
	return nil
}
