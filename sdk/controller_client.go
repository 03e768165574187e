package sdk

import (
	"context"
	"encoding/json"

	"google.golang.org/grpc"

	pb "github.com/flowgate/flowgate/sdk/internal/proto"
)

// controllerClient is the gateway's client of a plugin's controller
// service, the other end of controllerServer. sdk/pluginclient reaches it
// through sdk/internal/wire, so that the conversions stay in this
// package; its methods are exported only so that pluginclient can name
// them in an interface. Errors are the controller's, with the sdk
// sentinels intact (wireErrors.FromStatus).
type controllerClient struct {
	client pb.ControllerServiceClient
}

func newControllerClient(conn grpc.ClientConnInterface) *controllerClient {
	return &controllerClient{client: pb.NewControllerServiceClient(conn)}
}

// Setup hands the plugin the address of its Host socket.
func (c *controllerClient) Setup(ctx context.Context, hostAddress string) error {
	_, err := c.client.Setup(ctx, &pb.SetupRequest{HostAddress: hostAddress})
	return wireErrors.FromStatus(err)
}

// Info asks for the controller's Info.
func (c *controllerClient) Info(ctx context.Context) (Info, error) {
	r, err := c.client.GetInfo(ctx, &pb.GetInfoRequest{})
	if err != nil {
		return Info{}, wireErrors.FromStatus(err)
	}
	return infoFromProto(r), nil
}

// HandleEvent delivers one event, with f, the event's flow as the
// gateway read it for this delivery, or nil (see hostClient.forEvent).
func (c *controllerClient) HandleEvent(ctx context.Context, ev Event, f *Flow) error {
	in, err := eventToProto(ev, f)
	if err != nil {
		return err
	}
	_, err = c.client.HandleEvent(ctx, in)
	return wireErrors.FromStatus(err)
}

// Shutdown asks the controller to stop.
func (c *controllerClient) Shutdown(ctx context.Context) error {
	_, err := c.client.Shutdown(ctx, &pb.ShutdownRequest{})
	return wireErrors.FromStatus(err)
}

// RunStage runs one of the controller's stages.
func (c *controllerClient) RunStage(ctx context.Context, call StageCall) (json.RawMessage, error) {
	r, err := c.client.RunStage(ctx, stageCallToProto(call))
	if err != nil {
		return nil, wireErrors.FromStatus(err)
	}
	return r.GetItemsJson(), nil
}

// Watch runs the controller's Watcher until it returns or ctx ends.
func (c *controllerClient) Watch(ctx context.Context) error {
	_, err := c.client.Watch(ctx, &pb.WatchRequest{})
	return wireErrors.FromStatus(err)
}
