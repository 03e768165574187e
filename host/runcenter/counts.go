package runcenter

import (
	"context"
	"sync"
	"time"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
)

// flowCounts keeps the counts of the flow list's pressure line between
// pages. Counting reads every flow's status index entry (and each active
// flow's record, for its cancel request): the one part of the list's
// first page that grows with the store, most of its cost at 100,000
// flows, while the page itself reads PageSize flows through the index.
// So the counts are read again only once the store has been written
// since (api.Changes), and, for writes the client is not told of
// (another gateway's, on a shared store), once they are Config.Pulse
// old, the same bound a followed page has. With a client that does not
// report writes every page counts afresh.
type flowCounts struct {
	mu sync.Mutex
	c  apitype.FlowCounts
	at time.Time
	// changed is closed at the first write after c was read; nil when
	// nothing is kept.
	changed <-chan struct{}
}

// countFlows returns the counts of every flow by status, read again
// only when the kept ones may be stale.
func (s *Server) countFlows(ctx context.Context) (apitype.FlowCounts, error) {
	changes, ok := s.cfg.Client.(api.Changes)
	if !ok {
		return s.cfg.Client.CountFlows(ctx)
	}
	fc := &s.counts
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.changed != nil && time.Since(fc.at) < s.cfg.Pulse {
		select {
		case <-fc.changed:
		default:
			return fc.c, nil
		}
	}
	changed, at := changes.Changed(), time.Now() // before the count, so no write is missed
	c, err := s.cfg.Client.CountFlows(ctx)
	if err != nil {
		fc.changed = nil
		return c, err
	}
	fc.c, fc.at, fc.changed = c, at, changed
	return c, nil
}
