package etcd

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/flowgate/flowgate/host/store"
)

// Leadership is a member's standing campaign to lead the installation in
// one role (such as cron), on etcd's concurrency.Election: one member
// leads at a time, the others queue behind it, and the next takes over
// when the leader resigns, leaves, or its lease ends. Its zero value is
// not usable; make one with Member.Campaign.
type Leadership struct {
	m       *Member
	key     string // the election's prefix
	resign  chan struct{}
	stopped chan struct{}

	mu    sync.Mutex
	fence *store.Fence // set while this member leads
}

// electionKey is the prefix of role's election, beside the store's
// prefix.
func (s *Store) electionKey(role string) string {
	return strings.TrimSuffix(s.prefix, "/") + ".leader/" + role
}

// Campaign starts campaigning for role until the membership ends, and
// returns at once; Fence says whether this member leads.
func (m *Member) Campaign(role string) *Leadership {
	l := &Leadership{m: m, key: m.s.electionKey(role), resign: make(chan struct{}, 1), stopped: make(chan struct{})}
	m.campaigns.Add(1)
	go func() {
		defer m.campaigns.Done()
		defer close(l.stopped)
		l.run(m.ctx)
	}()
	return l
}

// Fence returns the fence of this member's leadership (the leader key and
// its creation revision), and whether it leads. A write fenced on it
// (store.Fencer) commits only while the leadership lasts.
func (l *Leadership) Fence() (store.Fence, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fence == nil {
		return store.Fence{}, false
	}
	return *l.fence, true
}

// Resign gives the leadership up, if this member has it, so the next in
// line takes over; the member then queues again behind it.
func (l *Leadership) Resign() {
	select {
	case l.resign <- struct{}{}:
	default:
	}
}

// run campaigns, leads until it must not, and campaigns again, until ctx
// or the member's session ends.
func (l *Leadership) run(ctx context.Context) {
	for ctx.Err() == nil {
		select {
		case <-l.m.session.Done():
			return
		default:
		}
		e := concurrency.NewElection(l.m.session, l.key)
		if err := e.Campaign(ctx, l.m.rec.ID); err != nil {
			if ctx.Err() == nil {
				l.m.s.opts.Logger.Warn("campaign for leadership failed; trying again", "election", l.key, "error", err)
				sleepCtx(ctx, time.Second)
			}
			continue
		}
		l.lead(ctx, e)
	}
}

// lead holds the fence until the leadership ends: a resignation, the
// session's end, or the leader key deleted by someone else.
func (l *Leadership) lead(ctx context.Context, e *concurrency.Election) {
	l.mu.Lock()
	l.fence = &store.Fence{Key: e.Key(), Revision: e.Rev()}
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.fence = nil
		l.mu.Unlock()
	}()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watch := l.m.s.cli.Watch(wctx, e.Key(), clientv3.WithRev(e.Rev()+1), clientv3.WithFilterPut())
	select {
	case <-ctx.Done():
	case <-l.m.session.Done():
	case <-watch: // deleted (or the watch broke): lead no longer
	case <-l.resign:
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), l.m.s.opts.RequestTimeout)
		defer rcancel()
		if err := e.Resign(rctx); err != nil {
			l.m.s.opts.Logger.Warn("resigning the leadership failed; it ends with the member's lease", "election", l.key, "error", err)
		}
	}
}

// Leader returns the id of the member that leads role, or "" when none
// does.
func (s *Store) Leader(ctx context.Context, role string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.cli.Get(ctx, s.electionKey(role)+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		return "", fmt.Errorf("etcd store: read the %s leader: %w", role, unavailable(s, err))
	}
	if len(resp.Kvs) == 0 {
		return "", nil
	}
	return string(resp.Kvs[0].Value), nil
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
