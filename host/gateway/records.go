package gateway

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/backend"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// CronRole is the election the gateways of an etcd installation hold
// for cron: its leader alone fires scheduled jobs.
const CronRole = "cron"

// records is the gateway's store with what the gateway asks of it beyond
// store.Store.
type records struct {
	store.Store
	health func() store.WriteHealth
	// space measures the store file; nil for a store that is no local file.
	space func() (store.Space, error)
	// writer answers what the store's writer did; nil but on bbolt.
	writer func() store.WriterStats
	// member is this gateway's membership of an etcd installation, to
	// whose lease its claim on the installation is bound; nil on bbolt,
	// whose file lock does that job.
	member *etcd.Member
	// cron is the member's campaign to lead cron; nil on bbolt.
	cron *etcd.Leadership
	// roster follows the installation's members, for whose event streams
	// are free (a stream's holder that is gone); nil on bbolt. Its watch
	// ends with stopWatch. onMembers, once set, hears each join and leave.
	roster    *etcd.Roster
	stopWatch context.CancelFunc
	onMembers atomic.Pointer[func()]
	// runner is the gateway's runner once made: the member's heartbeat
	// reports its load.
	runner atomic.Pointer[runner.Runner]
	// closing is set once close begins: the hold ending is then no news.
	closing atomic.Bool
}

// close lets go of the installation, waiting for etcd until ctx ends
// (etcd.Member.Leave), and closes the store.
func (r *records) close(ctx context.Context) error {
	r.closing.Store(true)
	var err error
	if r.member != nil {
		err = r.member.Leave(ctx)
	}
	if r.stopWatch != nil {
		r.stopWatch()
	}
	return errors.Join(err, r.Close())
}

// cronLeader is the scheduler's Leader: the member's campaign on etcd,
// none on bbolt (the one gateway always leads).
func (r *records) cronLeader() scheduler.Leader {
	if r.cron == nil {
		return nil
	}
	return r.cron
}

// cluster is the runner's Config.Cluster: nil on bbolt. A task's files
// are on this machine, under this home, when one of this home's gateways
// started it (homeMembers): this one, or an earlier one before a
// restart. Any other gateway's task is left to it, even one on this
// machine (several gateways run on one machine, each with a home of its
// own); when that gateway is no longer a member its tasks are settled as
// lost. A gone gateway whose id (host.pid) names this machine is
// reported as this machine's, so that the runner tells by the attempt's
// files in this home whether it ran from here. Whether a gateway is a
// member is the roster's answer, which asks etcd about a gateway it
// has not seen (once, for one found gone); one that cannot be looked up
// counts as a member, so nothing is marked lost on a guess.
func (r *records) cluster(dir string) func(gateway string) (bool, bool) {
	if r.member == nil {
		return nil
	}
	here, host := r.mine(dir), r.member.Host()
	return func(gateway string) (bool, bool) {
		if here(gateway) {
			return true, true
		}
		if !r.roster.Live(gateway) {
			// Gone: it ran on this machine when its id names this host
			// (the runner then finds no files of it in this home).
			return memberHost(gateway) == host, false
		}
		return false, true
	}
}

// memberHost is the host part of a member id: host.pid, or host.pid-N.
func memberHost(id string) string {
	if i := strings.LastIndexByte(id, '.'); i >= 0 {
		return id[:i]
	}
	return id
}

// departures is the runner's Config.Departures: nil on bbolt. They come
// from the roster that answers cluster, so a member whose departure
// arrives is already gone there.
func (r *records) departures() func(context.Context) <-chan string {
	if r.roster == nil {
		return nil
	}
	return r.roster.Departures
}

// mine is maintenance's Config.Mine: nil on bbolt. A task's files are
// in this home when one of this home's gateways started it, or when it
// names no gateway (it was started on bbolt, before a migration). The
// home's member ids are read once, here: only a gateway joining from
// this home adds to them, and while this one runs no other can (the
// socket is taken), so the list stays as read.
func (r *records) mine(dir string) func(gateway string) bool {
	if r.member == nil {
		return nil
	}
	ours, id := homeMembers(dir), r.member.ID()
	return func(gateway string) bool {
		return gateway == "" || gateway == id || slices.Contains(ours, gateway)
	}
}

// membersChanged passes a join or leave on to onMembers.
func (r *records) membersChanged() {
	if fn := r.onMembers.Load(); fn != nil {
		(*fn)()
	}
}

// live is the deliverer's DeliveryConfig.Live: nil on bbolt.
func (r *records) live() func(member string) bool {
	if r.roster == nil {
		return nil
	}
	return r.roster.Live
}

// memberID is this gateway's member id; empty on bbolt.
func (r *records) memberID() string {
	if r.member == nil {
		return ""
	}
	return r.member.ID()
}

// draining says whether this gateway must take no new work: it was
// asked to (flowgate cluster drain), or its membership ended (its lease
// expired while it was cut off or paused), after which the others take
// the tasks naming it for lost.
func (r *records) draining() bool {
	if r.member == nil {
		return false
	}
	select {
	case <-r.member.Done():
		return true
	default:
		return r.member.Draining()
	}
}

// load is what the member's heartbeat reports.
func (r *records) load() etcd.MemberLoad {
	l := etcd.MemberLoad{Drained: r.draining()}
	if run := r.runner.Load(); run != nil {
		l.Running, l.MaxRunning = run.Running(), run.MaxRunning()
	}
	return l
}

// storeSpec is the store this gateway uses: Config.Store, else the config
// file's store section; an empty URL means the home's bbolt file.
func (g *Gateway) storeSpec() backend.Spec {
	if g.cfg.Store.URL != "" {
		return g.cfg.Store
	}
	return g.cfg.File.Store.Spec()
}

// openRecords opens the store storeSpec names. The home's bbolt file is
// compacted first when a maintenance pass asked for it. On etcd the
// gateway joins the installation as a member (see join).
func (g *Gateway) openRecords(ctx context.Context, sopts store.Options) (*records, error) {
	spec := g.storeSpec()
	var st store.Store
	var err error
	if spec.URL == "" {
		dbPath := filepath.Join(g.cfg.Home, home.DBFile)
		// A maintenance pass asked for a compaction: now, before anything
		// holds the store, is when bbolt can do it.
		if done, before, after, err := maintenance.CompactIfRequested(g.cfg.Home, dbPath, sopts); err != nil {
			g.log.Error("compacting the store failed; starting on it as it is", "error", err)
		} else if done {
			g.log.Info("compacted the store", "before_bytes", before, "after_bytes", after)
		}
		st, err = g.openStore(ctx, dbPath, sopts)
	} else {
		st, err = backend.Open(spec, sopts)
	}
	if err != nil {
		return nil, err
	}
	// Commands on the home open the store its gateway serves; a command's
	// own gateway (Solo) serves the one that command chose.
	if !g.cfg.Solo {
		if err := recordStore(g.cfg.Home, spec); err != nil {
			st.Close()
			return nil, err
		}
	}
	r := &records{Store: st}
	switch s := st.(type) {
	case *store.Bolt:
		r.health, r.space, r.writer = s.WriteHealth, s.Space, s.Writer
	case *etcd.Store:
		r.health = s.WriteHealth
		if err := g.join(ctx, r, s, spec.URL); err != nil {
			st.Close()
			return nil, err
		}
	}
	return r, nil
}

// join registers the gateway as a member of the etcd installation s
// (host.pid, or host.pid-N when that is taken, with its address and the
// config's labels, under a session lease of cluster.lease_ttl), follows
// the other members (records.roster), and campaigns to lead cron. Several
// gateways serve one installation at once. A Solo gateway (Config.Solo)
// refuses an installation another member serves, with an error wrapping
// ErrAlreadyRunning and etcd.ErrHeld that names it.
func (g *Gateway) join(ctx context.Context, r *records, s *etcd.Store, url string) error {
	host, _ := os.Hostname()
	info := etcd.MemberInfo{ID: fmt.Sprintf("%s.%d", host, os.Getpid()), Host: host, PID: os.Getpid(),
		Home: g.cfg.Home, Address: SocketPath(g.cfg.Home), Labels: g.cfg.File.Cluster.Labels}
	if g.cfg.File.HTTP.Addr != "" {
		info.Address, info.TLS = g.cfg.File.HTTP.Addr, g.cfg.File.HTTP.TLS()
	}
	// host.pid is taken by another gateway of this process, or by a dead
	// one whose pid this process reuses before its lease ended: then
	// host.pid-2, up to nine more. A gateway that joins again (rejoin)
	// starts after the id it had, so that it adopts its tasks from it.
	base := info.ID
	var m *etcd.Member
	var err error
	n := g.joins
	for first := n + 1; n < first+10; {
		if n++; n > 1 {
			info.ID = fmt.Sprintf("%s-%d", base, n)
		}
		if m, err = s.Join(ctx, info, g.cfg.File.Cluster.ttlSeconds(), r.load); !errors.Is(err, etcd.ErrMemberExists) {
			break
		}
	}
	if err != nil {
		return err
	}
	g.joins = n
	if err := rememberMember(g.cfg.Home, info.ID); err != nil {
		m.Leave(ctx)
		return err
	}
	if g.cfg.Solo {
		if err := refuseServed(ctx, s, m, url); err != nil {
			m.Leave(ctx)
			return err
		}
	}
	wctx, stopWatch := context.WithCancel(context.Background())
	roster, err := s.WatchMembers(wctx, r.membersChanged)
	if err != nil {
		stopWatch()
		m.Leave(ctx)
		return err
	}
	r.member, r.roster, r.stopWatch, r.cron = m, roster, stopWatch, m.Campaign(CronRole)
	g.log.Info("joined the etcd installation", "store", url, "member", info.ID)
	go g.watchMembership(r, url)
	return nil
}

// refuseServed fails when a member other than m serves the installation,
// naming it (see Config.Solo).
func refuseServed(ctx context.Context, s *etcd.Store, m *etcd.Member, url string) error {
	members, err := s.Members(ctx)
	if err != nil {
		return err
	}
	for _, o := range members {
		if o.ID != m.ID() {
			return fmt.Errorf("%w on %s: %w: the installation is held by flowgate gateway (pid %d on %s, home %s; member %s)", ErrAlreadyRunning, url, etcd.ErrHeld, o.PID, o.Host, o.Home, o.ID)
		}
	}
	return nil
}
