package pluginclient

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"

	"github.com/flowgate/flowgate/sdk"
	pb "github.com/flowgate/flowgate/sdk/internal/proto"
	"github.com/flowgate/flowgate/sdk/internal/wire"
)

// pluginClient is the gateway's side of one controller plugin instance. It
// serves the gateway's Host to the plugin on a unix socket of its own,
// started by setup and stopped by Shutdown or when the plugin process
// exits.
type pluginClient struct {
	client pb.ControllerServiceClient
	// doneCtx is cancelled by go-plugin when the plugin process exits.
	doneCtx context.Context
	// hostServerOptions are added to the Host server's options; tests use
	// them to watch its connections.
	hostServerOptions []grpc.ServerOption

	// conn is the connection to the plugin; its shutdown ends the Host.
	conn *grpc.ClientConn

	mu      sync.Mutex
	hostSrv *grpc.Server
	hostLn  *hostListener
	// stopWatch ends stopHostWhenGone once the Host is stopped.
	stopWatch context.CancelFunc
}

var _ Plugin = (*pluginClient)(nil)

// err turns a call's error into the controller's error, or
// sdk.ErrPluginShutdown once the plugin process is gone.
func (c *pluginClient) err(err error) error {
	if err == nil {
		return nil
	}
	if c.doneCtx.Err() != nil {
		return fmt.Errorf("%w: the controller plugin process exited", sdk.ErrPluginShutdown)
	}
	return wireErrors.FromStatus(err)
}

// setup serves host on a unix socket of its own (see listenHost) and
// sends the socket's address to the plugin, which dials it once. The
// socket is served until stopHost; go-plugin's broker is not used, so a
// plugin in any language reaches the Host with its stock gRPC library.
func (c *pluginClient) setup(ctx context.Context, host sdk.Host) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: serve the host to the controller plugin: %v", sdk.ErrPluginShutdown, err)
	}
	ln, err := listenHost()
	if err != nil {
		return err
	}
	opts := append([]grpc.ServerOption{grpc.MaxRecvMsgSize(wire.MaxMessageSize), grpc.ChainUnaryInterceptor(codeTrailer)}, c.hostServerOptions...)
	s := grpc.NewServer(opts...)
	pb.RegisterHostServiceServer(s, &hostServer{host: host})
	watch, stopWatch := context.WithCancel(c.doneCtx)
	c.mu.Lock()
	c.hostSrv, c.hostLn, c.stopWatch = s, ln, stopWatch
	c.mu.Unlock()
	go func() { _ = s.Serve(ln) }() // returns when stopHost stops s, closing ln
	go c.stopHostWhenGone(watch)
	if _, err := c.client.Setup(ctx, &pb.SetupRequest{HostAddress: ln.target()}); err != nil {
		c.stopHost()
		return fmt.Errorf("set up the controller plugin: %w", c.err(err))
	}
	return nil
}

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
	r, err := c.client.GetInfo(ctx, &pb.GetInfoRequest{})
	if err != nil {
		return sdk.Info{}, c.err(err)
	}
	return infoFromProto(r), nil
}

// HandleEvent implements Plugin.
func (c *pluginClient) HandleEvent(ctx context.Context, ev sdk.Event) error {
	in, err := eventToProto(ev)
	if err != nil {
		return err
	}
	if _, err := c.client.HandleEvent(ctx, in); err != nil {
		return fmt.Errorf("event %d (%s) of flow %s: %w", ev.Seq, ev.Type, ev.FlowID, c.err(err))
	}
	return nil
}

// Shutdown implements Plugin.
func (c *pluginClient) Shutdown(ctx context.Context) error {
	_, err := c.client.Shutdown(ctx, &pb.ShutdownRequest{})
	c.stopHost()
	return c.err(err)
}

// RunStage implements Plugin.
func (c *pluginClient) RunStage(ctx context.Context, call sdk.StageCall) (json.RawMessage, error) {
	r, err := c.client.RunStage(ctx, stageCallToProto(call))
	if err != nil {
		return nil, c.err(err)
	}
	return r.GetItemsJson(), nil
}

// Watch implements Plugin.
func (c *pluginClient) Watch(ctx context.Context) error {
	if _, err := c.client.Watch(ctx, &pb.WatchRequest{}); err != nil {
		return fmt.Errorf("watch: %w", c.err(err))
	}
	return nil
}
