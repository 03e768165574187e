package etcd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// departuresBuffer is how many departures a Departures channel holds for
// a reader that is busy.
const departuresBuffer = 16

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
	// departures are the channels of Departures still read; nil once the
	// roster's watch ended, when ended is closed.
	departures []chan string
	ended      chan struct{}
}

// WatchMembers lists the members and follows them until ctx ends,
// calling onChange (if not nil) after each member joins or leaves. It
// fails when etcd cannot be read.
//
// A watch that breaks (etcd unreachable, no leader) resumes from the
// last change it saw, so no join or leave is skipped. When etcd has
// compacted its history past that change, the roster reads the members
// afresh instead: a member gone meanwhile counts as a departure then
// (see Departures). Only a member that both joined and left while the
// watch was broken goes unseen.
func (s *Store) WatchMembers(ctx context.Context, onChange func()) (*Roster, error) {
	r := &Roster{s: s, onChange: onChange, ended: make(chan struct{})}
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
// up counts as live. An id found gone is looked up once: after that
// the watch says; one found live is looked up until its join arrives.
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

// Departures sends the id of each member that leaves the installation
// from now on: it left (Leave), or its lease ended (it died, or was cut
// off from etcd past its TTL). Live already says it is gone when its id
// arrives. A member found gone by a fresh read of the members (after a
// compaction, see WatchMembers) is sent then. A reader that falls
// departuresBuffer ids behind misses the later ones: read the channel
// as "members left", and look at them all (Live) when it speaks. The
// channel is closed when ctx or the roster's watch ends.
func (r *Roster) Departures(ctx context.Context) <-chan string {
	ch := make(chan string, departuresBuffer)
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.ended:
		close(ch)
		return ch
	default:
	}
	r.departures = append(r.departures, ch)
	go func() {
		select {
		case <-ctx.Done():
		case <-r.ended:
			return // end closed ch
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if i := slices.Index(r.departures, ch); i >= 0 {
			r.departures = slices.Delete(r.departures, i, i+1)
			close(ch)
		}
	}()
	return ch
}

// list reads the members afresh and returns the etcd revision it read at.
// A member live before and absent now is a departure.
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
	defer r.mu.Unlock()
	for id := range r.live {
		if !live[id] {
			r.departed(id)
		}
	}
	r.live = live
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	for id := range live {
		r.seen[id] = true
	}
	return resp.Header.Revision, nil
}

// follow applies the watch's changes after revision rev until ctx ends.
// A watch that breaks is set up again after the last change applied, or
// after a fresh list of the members when etcd compacted that change
// away.
func (r *Roster) follow(ctx context.Context, rev int64) {
	defer r.end()
	for ctx.Err() == nil {
		var compacted bool
		rev, compacted = r.watch(ctx, rev)
		if ctx.Err() != nil {
			return
		}
		sleepCtx(ctx, r.s.opts.RequestTimeout/10)
		if !compacted {
			continue
		}
		if listed, err := r.list(ctx); err == nil {
			rev = listed
			r.changed()
		}
	}
}

// watch applies the changes after revision rev until the watch breaks,
// and returns the revision of the last change applied and whether etcd
// had compacted its history past rev+1.
func (r *Roster) watch(ctx context.Context, rev int64) (int64, bool) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	for resp := range r.s.cli.Watch(wctx, r.s.membersKey(), clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
		if resp.CompactRevision != 0 {
			return rev, true
		}
		if resp.Err() != nil {
			return rev, false
		}
		r.apply(resp.Events)
		if n := len(resp.Events); n > 0 {
			rev = resp.Events[n-1].Kv.ModRevision
		}
	}
	return rev, false
}

// apply records the joins and leaves of events.
func (r *Roster) apply(events []*clientv3.Event) {
	changed := false
	r.mu.Lock()
	for _, ev := range events {
		id := strings.TrimPrefix(string(ev.Kv.Key), r.s.membersKey())
		r.seen[id] = true
		was, now := r.live[id], ev.Type == clientv3.EventTypePut
		changed = changed || was != now
		if now {
			r.live[id] = true
		} else {
			delete(r.live, id)
		}
		if was && !now {
			r.departed(id)
		}
	}
	r.mu.Unlock()
	if changed {
		r.changed()
	}
}

// departed sends id on every Departures channel that has room; r.mu is
// held.
func (r *Roster) departed(id string) {
	for _, ch := range r.departures {
		select {
		case ch <- id:
		default:
		}
	}
}

// end closes the Departures channels once the watch ends.
func (r *Roster) end() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ch := range r.departures {
		close(ch)
	}
	r.departures = nil
	close(r.ended)
}

func (r *Roster) changed() {
	if r.onChange != nil {
		r.onChange()
	}
}
