package sdk

import (
	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	pb "github.com/flowgate/flowgate/sdk/internal/proto"
	"github.com/flowgate/flowgate/sdk/internal/wire"
)

// init lets sdk/pluginclient serve a controller in process (for tests)
// as Serve serves it, without this package exporting go-plugin types,
// and gives it the gateway's end of the protocol, which is written here
// because this package alone converts between the generated types and
// its own (wire.go).
func init() {
	wire.ServeController = func(c any) wire.ServerFunc { return serveController(c.(Controller), Logger()) }
	wire.HostServer = func(host func() any) pb.HostServiceServer {
		return &hostServer{host: func() Host { return host().(Host) }}
	}
	wire.ControllerClient = func(conn grpc.ClientConnInterface) any { return newControllerClient(conn) }
}

// serveController returns what registers c's controller service in the
// plugin process, logging c's panics to logger.
func serveController(c Controller, logger hclog.Logger) wire.ServerFunc {
	return func(s *grpc.Server) error {
		pb.RegisterControllerServiceServer(s, &controllerServer{impl: c, logger: logger})
		return nil
	}
}
