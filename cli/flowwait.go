package cli

import (
	"context"
	"errors"
	"time"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// flowWait is how long one read of a flow through a gateway's socket waits
// there for the flow to change before it answers anyway.
const flowWait = 5 * time.Second

// waiter returns the client behind l when it can wait at the gateway for
// a flow to change (api.FlowWaiter) and its gateway understands the
// request, else nil: followers then read again on their timer.
func (l *link) waiter() api.FlowWaiter {
	w, ok := l.c.(api.FlowWaiter)
	if !ok || l.noWait {
		return nil
	}
	return w
}

// nextView reads flow id: at once when mark is empty or the client cannot
// wait, else once the flow's api.FlowMark differs from mark (see
// api.FlowWaiter). A gateway of an older flowgate that refuses the wait
// (sdk.ErrInvalid) is read plainly from then on.
func (l *link) nextView(ctx context.Context, id, mark string) (apitype.FlowView, error) {
	if mark == "" || l.waiter() == nil {
		return l.viewFlow(ctx, id)
	}
	var v apitype.FlowView
	err := l.retry(ctx, true, func(c api.Client) (err error) {
		w := l.waiter() // c is l.c: the next gateway's client may not wait
		if w == nil {
			v, err = c.ViewFlow(ctx, id)
			return err
		}
		v, err = w.WaitFlow(ctx, id, mark, flowWait)
		if errors.Is(err, sdk.ErrInvalid) {
			l.noWait = true
			v, err = c.ViewFlow(ctx, id)
		}
		return err
	})
	return v, err
}
