package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// MaxFlowWait is the longest a gateway holds a ViewFlow request that
// asked to wait for a change (GET /v1/flows/{token}?mark=…&wait=…).
const MaxFlowWait = 10 * time.Second

// FlowWaiter is what a client offers that can wait at the gateway for a
// flow to change: Remote. A command following a flow through a gateway's
// socket asks it instead of reading again on a timer, so it learns of a
// step's end or the flow's end at the write.
type FlowWaiter interface {
	// WaitFlow reads flow token (as ViewFlow does) once its FlowMark
	// differs from mark, or once wait (at most MaxFlowWait) has passed,
	// whichever comes first; a gateway that cannot be told of writes
	// answers at once.
	WaitFlow(ctx context.Context, token, mark string, wait time.Duration) (apitype.FlowView, error)
}

var _ FlowWaiter = (*Remote)(nil)

// FlowMark is what a follower of a flow waits to see change: the flow's
// revision, which every step moves (the controller records each step's
// outcome on the flow before the next step starts) and the flow's end
// moves last. A task's own writes (its start, its progress) do not wake
// the follower: each wake-up is a read of the flow and all its tasks, on
// the cores the steps need.
func FlowMark(v apitype.FlowView) string {
	if v.Flow == nil {
		return ""
	}
	return strconv.FormatInt(v.Revision, 10)
}

// WaitFlow asks the gateway for flow token once it changes from mark (see
// FlowWaiter).
func (c *Remote) WaitFlow(ctx context.Context, token, mark string, wait time.Duration) (apitype.FlowView, error) {
	q := url.Values{"mark": {mark}, "wait": {strconv.FormatInt(min(wait, MaxFlowWait).Milliseconds(), 10)}}
	var out apitype.FlowView
	// The gateway holds the request up to wait on purpose; the answer
	// wait runs on top.
	if err := c.callWithin(ctx, c.wait+min(wait, MaxFlowWait), http.MethodGet, "/v1/flows/"+pathSegment(token), q, nil, &out); err != nil {
		return apitype.FlowView{}, err
	}
	return out, nil
}

// flowRevisions is what a client offers that reads a flow's revision
// alone, without decoding its record or reading its tasks: Local. A
// waiting ViewFlow checks the flow's mark with it at each write to the
// store, which is far cheaper than reading the whole view.
type flowRevisions interface {
	FlowRevision(ctx context.Context, token string) (int64, error)
}

// waitFlow serves a ViewFlow that asked to wait: it reads the flow again
// at every write to the store until the flow's mark differs from the one
// asked with, the wait (in milliseconds) runs out, or the server stops.
// A client that cannot tell of writes (not api.Changes) answers at once.
func (s *server) waitFlow(r *http.Request, token, mark, wait string) (apitype.FlowView, error) {
	ms, err := strconv.ParseInt(wait, 10, 64)
	if err != nil || ms < 0 {
		return apitype.FlowView{}, fmt.Errorf("%w: wait %q is not a whole number of milliseconds (at least 0)", sdk.ErrInvalid, wait)
	}
	ch, _ := s.c.(Changes)
	if ch == nil {
		return s.c.ViewFlow(r.Context(), token)
	}
	ctx, stop := s.streams.Context(r)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, min(time.Duration(ms)*time.Millisecond, MaxFlowWait))
	defer cancel()
	for {
		changed := ch.Changed()
		if !s.sameFlow(r.Context(), token, mark) {
			v, err := s.c.ViewFlow(r.Context(), token)
			if err != nil || FlowMark(v) != mark {
				return v, err
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return s.c.ViewFlow(r.Context(), token)
		}
	}
}

// sameFlow reports whether flow token still has mark, by its revision
// alone; false when the client cannot read it so (the caller then reads
// the whole view).
func (s *server) sameFlow(ctx context.Context, token, mark string) bool {
	fr, ok := s.c.(flowRevisions)
	if !ok {
		return false
	}
	rev, err := fr.FlowRevision(ctx, token)
	return err == nil && FlowMark(apitype.FlowView{Flow: &sdk.Flow{Revision: rev}}) == mark
}
