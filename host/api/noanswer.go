package api

import (
	"context"
	"errors"
)

// ErrNoAnswer means the request reached the gateway but no answer came
// back: the gateway stopped (or was killed) while it handled it. A change
// the request asked for may or may not have been made; read the records
// again (through the next gateway, or the store) to find out. A request
// that carries an idempotency key can simply be sent again.
var ErrNoAnswer = errors.New("the gateway stopped before it answered")

// errNotConnected marks a request that failed before its connection was
// made (the gateway's backlog was full, or the dial ran out of time):
// nothing was sent.
var errNotConnected = errors.New("not connected")

// sent reports whether a failed request may have reached the gateway:
// the connection was made (a failed dial wraps ErrNoGateway,
// ErrUntrustedGateway or errNotConnected and sent nothing) and the caller
// did not give up on it (a cancelled ctx is the caller's own doing).
func sent(ctx context.Context, err error) bool {
	return ctx.Err() == nil && !errors.Is(err, ErrNoGateway) && !errors.Is(err, ErrUntrustedGateway) && !errors.Is(err, errNotConnected)
}
