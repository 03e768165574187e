package pluginclient

import (
	"context"

	"github.com/flowgate/flowgate/sdk"
	pb "github.com/flowgate/flowgate/sdk/internal/proto"
	"github.com/flowgate/flowgate/sdk/internal/wire"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// wireErrors carries errors across the plugin protocol, as package sdk
// does on the plugin's end. Read-only.
var wireErrors = wire.Errors[sdk.Flow, *sdk.RevisionConflictError]{
	Conflict: func(e *sdk.RevisionConflictError) (int64, *sdk.Flow) { return e.Expected, e.Current },
	NewConflict: func(expected int64, cur *sdk.Flow) *sdk.RevisionConflictError {
		return &sdk.RevisionConflictError{Expected: expected, Current: cur}
	},
}

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
