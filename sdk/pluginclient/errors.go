package pluginclient

import (
	"context"

	pb "github.com/flowgate/flowgate/sdk/internal/proto"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// ErrorCodeTrailer is the trailer in which the Host service also sends
// the flowgate error code of a failed call ("revision_conflict",
// "terminal", …), as plain text: a plugin whose gRPC library does not
// decode status details reads it there.
const ErrorCodeTrailer = "flowgate-error-code"

// codeTrailer is the Host server's interceptor that copies the code of a
// failed call's Error detail into ErrorCodeTrailer.
func codeTrailer(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if err == nil {
		return resp, nil
	}
	if st, ok := status.FromError(err); ok {
		for _, d := range st.Details() {
			if e, ok := d.(*pb.Error); ok {
				_ = grpc.SetTrailer(ctx, metadata.Pairs(ErrorCodeTrailer, e.GetCode()))
			}
		}
	}
	return resp, err
}
