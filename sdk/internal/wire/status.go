package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/flowgate/flowgate/sdk/errcode"
	pb "github.com/flowgate/flowgate/sdk/internal/proto"
)

// Errors turns errors into gRPC statuses and back, for the record type F
// (sdk.Flow) and the revision conflict error E
// (*sdk.RevisionConflictError), which this package cannot name. The
// codes are errcode's, the table the HTTP API uses too.
type Errors[F any, E error] struct {
	// Conflict returns what a conflict carries: the revision the caller
	// expected and the record as it is now (nil if unknown).
	Conflict func(E) (expected int64, current *F)
	// NewConflict makes the conflict error again on the other side.
	NewConflict func(expected int64, current *F) E
}

// ToStatus turns an error into the gRPC status that carries it: the
// message verbatim, the code of its sentinel with an Error detail naming
// it (and, for a revision conflict, the current record), or
// DeadlineExceeded and Canceled for context errors, or Unknown.
func (w Errors[F, E]) ToStatus(err error) error {
	if err == nil {
		return nil
	}
	if c, ok := errcode.Of(err); ok {
		detail := &pb.Error{Code: c.Name}
		if rc, ok := errors.AsType[E](err); ok {
			var cur *F
			detail.ExpectedRevision, cur = w.Conflict(rc)
			if cur != nil {
				// A record always encodes; were it not to, the
				// conflict still crosses, only without the record.
				detail.CurrentFlowJson, _ = json.Marshal(cur)
			}
		}
		st, derr := status.New(c.GRPC, err.Error()).WithDetails(detail)
		if derr != nil {
			return status.Error(c.GRPC, err.Error())
		}
		return st.Err()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	}
	return status.Error(codes.Unknown, err.Error())
}

// FromStatus turns an error returned by a gRPC call back into the error
// the other side returned: its message verbatim, matching under
// errors.Is the sentinel its Error detail names (an E with the current
// record for a conflict), or context.DeadlineExceeded or
// context.Canceled. A bare Unavailable status is a broken connection and
// becomes errcode.ErrPluginShutdown. Other errors keep their message and
// match no sentinel.
func (w Errors[F, E]) FromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	e := &remoteError{msg: st.Message()}
	for _, d := range st.Details() {
		detail, ok := d.(*pb.Error)
		if !ok {
			continue
		}
		if c, ok := errcode.Named(detail.Code); ok {
			e.cause = c.Err
		}
		if e.cause == errcode.ErrRevisionConflict {
			var cur *F
			if len(detail.CurrentFlowJson) > 0 {
				f := new(F)
				if json.Unmarshal(detail.CurrentFlowJson, f) == nil {
					cur = f
				}
			}
			e.cause = w.NewConflict(detail.ExpectedRevision, cur)
		}
		return e
	}
	switch st.Code() {
	case codes.DeadlineExceeded:
		e.cause = context.DeadlineExceeded
	case codes.Canceled:
		e.cause = context.Canceled
	case codes.Unavailable:
		return fmt.Errorf("%w: connection lost: %s", errcode.ErrPluginShutdown, st.Message())
	}
	return e
}

// remoteError is an error the other side of the connection returned. It
// prints that side's message as it was and unwraps to the sentinel (or
// typed error) its code named, or to nothing.
type remoteError struct {
	msg   string
	cause error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.cause }
