package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/flowgate/flowgate/sdk/internal/proto"
)

// wireCode ties an sdk sentinel to its code in the Error detail and to the
// gRPC status code it travels under.
type wireCode struct {
	code     string
	sentinel error
	grpc     codes.Code
}

// wireCodes is the one table both directions use: statusError picks the
// first entry the error matches (errors.Is), errorFromStatus turns a code
// back into that entry's sentinel. The codes are those of the HTTP API.
// Read-only.
var wireCodes = []wireCode{
	{"revision_conflict", ErrRevisionConflict, codes.Aborted},
	{"not_found", ErrNotFound, codes.NotFound},
	{"invalid", ErrInvalid, codes.InvalidArgument},
	{"terminal", ErrTerminal, codes.FailedPrecondition},
	{"cancel_requested", ErrCancelRequested, codes.FailedPrecondition},
	{"not_managed", ErrNotManaged, codes.FailedPrecondition},
	{"owner_mismatch", ErrOwnerMismatch, codes.PermissionDenied},
	{"illegal_transition", ErrIllegalTransition, codes.FailedPrecondition},
	{"plugin_shutdown", ErrPluginShutdown, codes.Unavailable},
}

// statusError turns an error into the gRPC status that carries it: the
// message verbatim, the code of its sentinel with an Error detail naming
// it (and, for a revision conflict, the current flow), or DeadlineExceeded
// and Canceled for context errors, or Unknown.
func statusError(err error) error {
	if err == nil {
		return nil
	}
	for _, c := range wireCodes {
		if !errors.Is(err, c.sentinel) {
			continue
		}
		detail := &pb.Error{Code: c.code}
		if rc, ok := errors.AsType[*RevisionConflictError](err); ok {
			detail.ExpectedRevision = rc.Expected
			if rc.Current != nil {
				// A flow always encodes; were it not to, the
				// conflict still crosses, only without the flow.
				detail.CurrentFlowJson, _ = json.Marshal(rc.Current)
			}
		}
		st, derr := status.New(c.grpc, err.Error()).WithDetails(detail)
		if derr != nil {
			return status.Error(c.grpc, err.Error())
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

// errorFromStatus turns an error returned by a gRPC call back into the
// error the other side returned: its message verbatim, matching under
// errors.Is the sentinel its Error detail names (a *RevisionConflictError
// with the current flow for a conflict), or context.DeadlineExceeded or
// context.Canceled. A bare Unavailable status is a broken connection and
// becomes ErrPluginShutdown. Other errors keep their message and match no
// sentinel.
func errorFromStatus(err error) error {
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
		for _, c := range wireCodes {
			if c.code == detail.Code {
				e.cause = c.sentinel
				break
			}
		}
		if e.cause == ErrRevisionConflict {
			rc := &RevisionConflictError{Expected: detail.ExpectedRevision}
			if len(detail.CurrentFlowJson) > 0 {
				cur := new(Flow)
				if json.Unmarshal(detail.CurrentFlowJson, cur) == nil {
					rc.Current = cur
				}
			}
			e.cause = rc
		}
		return e
	}
	switch st.Code() {
	case codes.DeadlineExceeded:
		e.cause = context.DeadlineExceeded
	case codes.Canceled:
		e.cause = context.Canceled
	case codes.Unavailable:
		return fmt.Errorf("%w: connection lost: %s", ErrPluginShutdown, st.Message())
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
