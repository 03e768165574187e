package etcd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// DefaultMemberTTL is a member's lease, in seconds, when Join is given
// none: a gateway that dies leaves the membership within this time.
const DefaultMemberTTL = 10

// ErrMemberExists is returned by Join for an id already registered.
var ErrMemberExists = errors.New("etcd store: member id taken")

// ErrNoMember is returned by Drain for a member id that is not registered.
var ErrNoMember = errors.New("etcd store: no such member")

// MemberInfo is what a gateway registers about itself when it joins an
// installation.
type MemberInfo struct {
	// ID names the member in the installation; unique among the members
	// alive at once (a gateway uses host.pid).
	ID      string `json:"id"`
	Host    string `json:"host"`
	PID     int    `json:"pid"`
	Home    string `json:"home,omitempty"`
	Address string `json:"address,omitempty"`
	// TLS says the run center at Address serves HTTPS.
	TLS    bool     `json:"tls,omitempty"`
	Labels []string `json:"labels,omitempty"`
}

// MemberLoad is what a member reports of its work at each heartbeat.
type MemberLoad struct {
	Running    int `json:"running"`
	MaxRunning int `json:"max_running"`
	// Drained says the member has seen its drain mark and starts no
	// queued task.
	Drained bool `json:"drained"`
}

// MemberRecord is a member as registered: its info, its last heartbeat
// and load, and (filled in by Members) its lease and whether it drains.
type MemberRecord struct {
	MemberInfo
	Started   time.Time  `json:"started"`
	Heartbeat time.Time  `json:"heartbeat"`
	Load      MemberLoad `json:"load"`
	// Lease is the member's lease id; TTL its configured seconds, and
	// LeaseLeft the seconds etcd still grants it.
	Lease     int64 `json:"lease"`
	TTL       int   `json:"ttl"`
	LeaseLeft int64 `json:"lease_left"`
	Draining  bool  `json:"draining"`
}

// Member is this process's membership of the installation (see Join):
// one session lease, kept alive by the client, to which the member's
// record, its drain mark and its holds are bound. Its zero value is not
// usable.
type Member struct {
	s       *Store
	session *concurrency.Session
	rec     MemberRecord
	load    func() MemberLoad
	// ctx ends when the member leaves; cancel ends it. run and the
	// campaigns stop with it.
	ctx       context.Context
	cancel    context.CancelFunc
	stopped   chan struct{}
	campaigns sync.WaitGroup
	drain     atomic.Bool
	once      sync.Once
	err       error
}

// membersKey and drainKey sit beside the prefix, so
// they are no records of the store.
func (s *Store) membersKey() string { return strings.TrimSuffix(s.prefix, "/") + ".members/" }
func (s *Store) drainKey() string   { return strings.TrimSuffix(s.prefix, "/") + ".drain/" }

// Join registers this process as a member of the installation under a
// session lease of ttl seconds (DefaultMemberTTL when zero) and rewrites
// its record with load's answer every third of ttl (its heartbeat). The
// record, and anything later bound to the member's lease, goes when the
// member leaves or its lease ends. An id already registered is refused
// with an error wrapping ErrMemberExists.
func (s *Store) Join(ctx context.Context, info MemberInfo, ttl int, load func() MemberLoad) (*Member, error) {
	if ttl <= 0 {
		ttl = DefaultMemberTTL
	}
	if info.ID == "" {
		return nil, errors.New("etcd store: a member needs an id")
	}
	// The lease is granted within ctx and the request timeout, so a Join
	// while etcd does not answer fails in time; the session that keeps
	// it alive outlives ctx.
	gctx, gcancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	lease, err := s.cli.Grant(gctx, int64(ttl))
	gcancel()
	if err != nil {
		return nil, fmt.Errorf("etcd store: take a member lease: %w", unavailable(s, err))
	}
	session, err := concurrency.NewSession(s.cli, concurrency.WithLease(lease.ID), concurrency.WithTTL(ttl), concurrency.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return nil, fmt.Errorf("etcd store: keep the member lease alive: %w", unavailable(s, err))
	}
	now := time.Now().UTC()
	m := &Member{s: s, session: session, load: load, stopped: make(chan struct{}),
		rec: MemberRecord{MemberInfo: info, Started: now, Heartbeat: now, Lease: int64(session.Lease()), TTL: ttl}}
	if load != nil {
		m.rec.Load = load()
	}
	value, _ := json.Marshal(m.rec)
	key := s.membersKey() + info.ID
	rctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.cli.Txn(rctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(value), clientv3.WithLease(session.Lease()))).
		Commit()
	if err != nil {
		session.Close()
		return nil, fmt.Errorf("etcd store: register member %s: %w", info.ID, unavailable(s, err))
	}
	if !resp.Succeeded {
		session.Close()
		return nil, fmt.Errorf("%w: a member named %s is already registered on %s; give this one another id, or wait for that one to leave", ErrMemberExists, info.ID, strings.TrimSuffix(s.prefix, "/"))
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	watch := s.cli.Watch(m.ctx, s.drainKey()+info.ID, clientv3.WithRev(resp.Header.Revision+1))
	go m.run(m.ctx, watch)
	return m, nil
}

// ID returns the member's id.
func (m *Member) ID() string { return m.rec.ID }

// Host returns the host the member registered.
func (m *Member) Host() string { return m.rec.Host }

// Done is closed when the membership ends: Leave, or a lease etcd let
// expire.
func (m *Member) Done() <-chan struct{} { return m.session.Done() }

// Draining says whether someone asked this member (Store.Drain) to take
// no new work.
func (m *Member) Draining() bool { return m.drain.Load() }

// run beats the heartbeat and follows the member's drain mark until the
// membership ends.
func (m *Member) run(ctx context.Context, watch clientv3.WatchChan) {
	defer close(m.stopped)
	tick := time.NewTicker(time.Duration(m.rec.TTL) * time.Second / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.session.Done():
			return
		case resp, ok := <-watch:
			if !ok {
				return
			}
			for _, ev := range resp.Events {
				m.drain.Store(ev.Type == clientv3.EventTypePut)
			}
		case <-tick.C:
			m.beat(ctx)
		}
	}
}

// beat rewrites the member's record with the time and its load, while
// its key is still its own (a lapsed lease deleted it).
func (m *Member) beat(ctx context.Context) {
	m.rec.Heartbeat = time.Now().UTC()
	if m.load != nil {
		m.rec.Load = m.load()
	}
	value, _ := json.Marshal(m.rec)
	key := m.s.membersKey() + m.rec.ID
	rctx, cancel := context.WithTimeout(ctx, m.s.opts.RequestTimeout)
	defer cancel()
	_, err := m.s.cli.Txn(rctx).
		If(clientv3.Compare(clientv3.LeaseValue(key), "=", m.session.Lease())).
		Then(clientv3.OpPut(key, string(value), clientv3.WithLease(m.session.Lease()))).
		Commit()
	if err != nil && ctx.Err() == nil {
		m.s.opts.Logger.Warn("member heartbeat failed; the lease is still kept alive apart from it", "member", m.rec.ID, "error", err)
	}
}

// Leave ends the membership at once: revoking the lease deletes the
// member's record, its drain mark, its holds and its place in every
// election, so the next in line leads at once. It is idempotent, and a
// member whose lease already ended has left: etcd deleted all of that
// when the lease ended. It waits for etcd until ctx ends, and no longer
// than the lease's TTL, after which the lease has ended by itself: a
// member cut off from etcd fails to leave with an error that says so,
// and its campaigns, still waiting on etcd, end when the store closes.
func (m *Member) Leave(ctx context.Context) error {
	m.once.Do(func() {
		m.cancel()
		<-m.stopped
		ctx, cancel := context.WithTimeout(ctx, time.Duration(m.rec.TTL)*time.Second)
		defer cancel()
		m.session.Orphan()
		_, err := m.s.cli.Revoke(ctx, m.session.Lease())
		campaigns := make(chan struct{})
		go func() {
			m.campaigns.Wait()
			close(campaigns)
		}()
		select {
		case <-campaigns:
		case <-ctx.Done():
		}
		switch {
		case errors.Is(err, rpctypes.ErrLeaseNotFound):
			m.s.opts.Logger.Warn("member's lease had already ended; nothing left to leave", "member", m.rec.ID)
		case err != nil:
			m.err = fmt.Errorf("etcd store: leave as member %s: etcd at %v did not revoke its lease (%w); the lease ends by itself within %ds", m.rec.ID, m.s.cli.Endpoints(), err, m.rec.TTL)
		}
	})
	return m.err
}

// Members lists the registered members by id, each with the seconds its
// lease has left and whether it drains.
func (s *Store) Members(ctx context.Context) ([]MemberRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.cli.Txn(ctx).Then(
		clientv3.OpGet(s.membersKey(), clientv3.WithPrefix()),
		clientv3.OpGet(s.drainKey(), clientv3.WithPrefix(), clientv3.WithKeysOnly()),
	).Commit()
	if err != nil {
		return nil, fmt.Errorf("etcd store: list the members: %w", unavailable(s, err))
	}
	drained := map[string]bool{}
	for _, kv := range resp.Responses[1].GetResponseRange().Kvs {
		drained[strings.TrimPrefix(string(kv.Key), s.drainKey())] = true
	}
	var out []MemberRecord
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		var rec MemberRecord
		if err := json.Unmarshal(kv.Value, &rec); err != nil {
			return nil, fmt.Errorf("etcd store: member record %s is not valid JSON (%v); delete it with etcdctl del %s", kv.Key, err, kv.Key)
		}
		rec.Lease, rec.Draining = kv.Lease, drained[rec.ID]
		if ttl, err := s.cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease)); err == nil {
			rec.LeaseLeft = ttl.TTL
		}
		out = append(out, rec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Member returns the record of member id, or nil when id is not a
// member now.
func (s *Store) Member(ctx context.Context, id string) (*MemberRecord, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.cli.Get(ctx, s.membersKey()+id)
	if err != nil {
		return nil, fmt.Errorf("etcd store: look up member %s: %w", id, unavailable(s, err))
	}
	if len(resp.Kvs) == 0 {
		return nil, nil
	}
	var rec MemberRecord
	if err := json.Unmarshal(resp.Kvs[0].Value, &rec); err != nil {
		return nil, fmt.Errorf("etcd store: member record %s is not valid JSON (%v); delete it with etcdctl del %s", resp.Kvs[0].Key, err, resp.Kvs[0].Key)
	}
	rec.Lease = resp.Kvs[0].Lease
	return &rec, nil
}

// Drain marks member id to take no new work, bound to its lease (so the
// mark goes with the member). A member not registered is refused with an
// error wrapping ErrNoMember.
func (s *Store) Drain(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	key := s.membersKey() + id
	get, err := s.cli.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("etcd store: find member %s: %w", id, unavailable(s, err))
	}
	if len(get.Kvs) == 0 {
		return fmt.Errorf("%w: %s is not a member of %s; flowgate cluster status lists them", ErrNoMember, id, strings.TrimSuffix(s.prefix, "/"))
	}
	lease := get.Kvs[0].Lease
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.LeaseValue(key), "=", lease)).
		Then(clientv3.OpPut(s.drainKey()+id, "", clientv3.WithLease(clientv3.LeaseID(lease)))).
		Commit()
	if err != nil {
		return fmt.Errorf("etcd store: drain member %s: %w", id, unavailable(s, err))
	}
	if !resp.Succeeded {
		return fmt.Errorf("%w: %s left %s while being drained", ErrNoMember, id, strings.TrimSuffix(s.prefix, "/"))
	}
	return nil
}
