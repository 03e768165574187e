package pluginclient_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/internal/grpctest"
	pb "github.com/flowgate/flowgate/sdk/internal/proto"
	"github.com/flowgate/flowgate/sdk/pluginclient"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// bareController is a controller as a plugin in another language writes
// it: it keeps the host address Setup sends and nothing else.
type bareController struct {
	pb.UnimplementedControllerServiceServer
	addresses chan string
}

func (c *bareController) Setup(_ context.Context, r *pb.SetupRequest) (*pb.SetupResponse, error) {
	c.addresses <- r.GetHostAddress()
	return &pb.SetupResponse{}, nil
}

func (c *bareController) Shutdown(context.Context, *pb.ShutdownRequest) (*pb.ShutdownResponse, error) {
	return &pb.ShutdownResponse{}, nil
}

// The gateway's Host is reachable with a stock gRPC client at the address
// Setup carries, a unix socket in a directory only the gateway's user can
// enter, without go-plugin's broker; the socket is gone after Shutdown.
func TestHostOnUnixSocketWithoutBroker(t *testing.T) {
	t.Parallel()
	bare := &bareController{addresses: make(chan string, 1)}
	client := grpctest.GRPCConn(t, pluginclient.PluginSetServing(func(s *grpc.Server) {
		pb.RegisterControllerServiceServer(s, bare)
	}))
	t.Cleanup(func() { _ = client.Close() })
	host := sdktest.NewHost()
	f, err := host.NewFlow("bare", "reach the host", nil)
	require.NoError(t, err)
	p, err := pluginclient.Connect(t.Context(), client, host)
	require.NoError(t, err)

	addr := <-bare.addresses
	require.True(t, strings.HasPrefix(addr, "unix:///"), "host address %q", addr)
	sock := strings.TrimPrefix(addr, "unix://")
	fi, err := os.Stat(filepath.Dir(sock))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the socket's directory is the gateway user's only")

	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	r, err := pb.NewHostServiceClient(cc).GetFlow(t.Context(), &pb.GetFlowRequest{FlowId: f.ID})
	require.NoError(t, err)
	var got sdk.Flow
	require.NoError(t, json.Unmarshal(r.GetFlowJson(), &got))
	require.Equal(t, f.ID, got.ID)

	// A refusal carries its flowgate code in a plain trailer too.
	var trailer metadata.MD
	_, err = pb.NewHostServiceClient(cc).UpdateFlow(t.Context(),
		&pb.UpdateFlowRequest{FlowId: f.ID, ExpectedRevision: f.Revision + 5, State: []byte(`{}`)}, grpc.Trailer(&trailer))
	require.Equal(t, codes.Aborted, status.Code(err))
	require.Equal(t, []string{"revision_conflict"}, trailer.Get(pluginclient.ErrorCodeTrailer))

	require.NoError(t, p.Shutdown(context.Background()))
	_, err = os.Stat(filepath.Dir(sock))
	require.ErrorIs(t, err, os.ErrNotExist, "Shutdown removes the host socket's directory")
}
