package sdk

import (
	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"

	pb "github.com/flowgate/flowgate/sdk/internal/proto"
	"github.com/flowgate/flowgate/sdk/internal/wire"
)

// init lets sdk/pluginclient serve a controller in process (for tests)
// as Serve serves it, without this package exporting go-plugin types.
func init() {
	wire.ServeController = func(c any) wire.ServerFunc { return serveController(c.(Controller), Logger()) }
}

// serveController returns what registers c's controller service in the
// plugin process, logging c's panics to logger.
func serveController(c Controller, logger hclog.Logger) wire.ServerFunc {
	return func(s *grpc.Server) error {
		pb.RegisterControllerServiceServer(s, &controllerServer{impl: c, logger: logger})
		return nil
	}
}
