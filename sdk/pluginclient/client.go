package pluginclient

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/flowgate/flowgate/sdk"
	pb "github.com/flowgate/flowgate/sdk/internal/proto"
	"github.com/flowgate/flowgate/sdk/internal/wire"
)

// pluginClient is the gateway's side of one controller plugin instance. It
// serves the gateway's Host to the plugin on one brokered connection,
// started by setup and stopped by Shutdown (or when go-plugin closes the
// broker on Kill).
type pluginClient struct {
	client pb.ControllerClient
	broker *plugin.GRPCBroker
	// doneCtx is cancelled by go-plugin when the plugin process exits.
	doneCtx context.Context
	// hostServerOptions are added to the Host server's options; tests use
	// them to watch its connections.
	hostServerOptions []grpc.ServerOption

	mu      sync.Mutex
	hostSrv *grpc.Server
	stopped bool
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

// setup serves host on a new broker id and sends the id to the plugin,
// which dials it once.
func (c *pluginClient) setup(ctx context.Context, host sdk.Host) error {
	id := c.broker.NextId()
	go c.broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
		opts = append(opts, grpc.MaxRecvMsgSize(wire.MaxMessageSize))
		opts = append(opts, c.hostServerOptions...)
		s := grpc.NewServer(opts...)
		pb.RegisterHostServer(s, &hostServer{host: host})
		c.mu.Lock()
		defer c.mu.Unlock()
		c.hostSrv = s
		if c.stopped {
			s.Stop() // Serve then returns at once.
		}
		return s
	})
	if _, err := c.client.Setup(ctx, &pb.SetupRequest{HostBrokerId: id}); err != nil {
		c.stopHost()
		return fmt.Errorf("set up the controller plugin: %w", c.err(err))
	}
	return nil
}

// stopHost stops serving the Host: the plugin's later callbacks fail with
// ErrPluginShutdown.
func (c *pluginClient) stopHost() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.hostSrv != nil {
		c.hostSrv.Stop()
	}
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
