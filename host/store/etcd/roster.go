package etcd

import (
	"context"
	"fmt"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Roster follows which members the installation has, by a watch on their
// records: a member that leaves (Leave) or whose lease ends is gone from
// it as soon as etcd deletes its record. Its zero value is not usable;
// make one with Store.WatchMembers.
type Roster struct {
	s        *Store
	onChange func()
	mu       sync.Mutex
	live     map[string]bool
	// seen holds every id the roster has seen join or leave, or found
	// gone (see Live).
	seen map[string]bool
}

// WatchMembers lists the members and follows them until ctx ends,
// calling onChange (if not nil) after each member joins or leaves. It
// fails when etcd cannot be read.
func (s *Store) WatchMembers(ctx context.Context, onChange func()) (*Roster, error) {
	r := &Roster{s: s, onChange: onChange}
	rev, err := r.list(ctx)
	if err != nil {
		return nil, err
	}
	go r.follow(ctx, rev)
	return r, nil
}

// Live says whether member id is a member now, as far as the watch has
// seen. An id the watch has not seen either way (a member that joined a
// moment ago, whose join is still on its way) is looked up in etcd, so
// that a new member is never taken for gone; one that cannot be looked
// up counts as live.
func (r *Roster) Live(id string) bool {
	r.mu.Lock()
	live, seen := r.live[id], r.seen[id]
	r.mu.Unlock()
	if live || seen {
		return live
	}
	rec, err := r.s.Member(context.Background(), id)
	if err != nil || rec != nil {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[id] = true
	return r.live[id] // its join may have come in meanwhile
}

// list reads the members afresh and returns the etcd revision it read at.
func (r *Roster) list(ctx context.Context) (int64, error) {
	rctx, cancel := context.WithTimeout(ctx, r.s.opts.RequestTimeout)
	defer cancel()
	resp, err := r.s.cli.Get(rctx, r.s.membersKey(), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return 0, fmt.Errorf("etcd store: list the members: %w", unavailable(r.s, err))
	}
	live := map[string]bool{}
	for _, kv := range resp.Kvs {
		live[strings.TrimPrefix(string(kv.Key), r.s.membersKey())] = true
	}
	r.mu.Lock()
	r.live = live
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	for id := range live {
		r.seen[id] = true
	}
	r.mu.Unlock()
	return resp.Header.Revision, nil
}

// follow applies the watch's events from revision rev on, and lists the
// members again whenever the watch breaks (a compaction, a lost
// connection), until ctx ends.
func (r *Roster) follow(ctx context.Context, rev int64) {
	for ctx.Err() == nil {
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		for resp := range r.s.cli.Watch(wctx, r.s.membersKey(), clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
			if resp.Err() != nil {
				break
			}
			r.apply(resp.Events)
			rev = resp.Header.Revision
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		sleepCtx(ctx, r.s.opts.RequestTimeout/10)
		if next, err := r.list(ctx); err == nil {
			rev = next
			r.changed()
		}
	}
}

// apply records the joins and leaves of events.
func (r *Roster) apply(events []*clientv3.Event) {
	changed := false
	r.mu.Lock()
	for _, ev := range events {
		id := strings.TrimPrefix(string(ev.Kv.Key), r.s.membersKey())
		r.seen[id] = true
		was := r.live[id]
		r.live[id] = ev.Type == clientv3.EventTypePut
		changed = changed || was != r.live[id]
		if !r.live[id] {
			delete(r.live, id)
		}
	}
	r.mu.Unlock()
	if changed {
		r.changed()
	}
}

func (r *Roster) changed() {
	if r.onChange != nil {
		r.onChange()
	}
}
