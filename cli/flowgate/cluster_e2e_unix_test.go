//go:build unix

package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/host/store/etcd/etcdtest"
)

// clusterLeaseTTL is the cluster.lease_ttl of the gateways in these
// tests: short, so that a paused or killed leader's lease ends soon, and
// long enough for a loaded machine to renew a live one.
const clusterLeaseTTL = 3 * time.Second

// etcdInstall is a flowgate installation kept in an embedded etcd that
// the test process runs (loopback ports, data in a temporary directory),
// served by real `flowgate gateway` processes, each on a home of its own.
type etcdInstall struct {
	t      *testing.T
	bin    string
	srv    *etcdtest.Server
	prefix string
	url    string
	es     *etcd.Store // the installation, read directly
	work   string      // ledgers and gateway logs
	fences *fenceLog
}

// newEtcdInstall builds the binary, starts an embedded etcd and watches
// the cron election from before any gateway starts.
func newEtcdInstall(t *testing.T) *etcdInstall {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end run with real gateway processes on an embedded etcd")
	}
	bin := buildFlowgate(t)
	srv, err := etcdtest.Start()
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	prefix := srv.Prefix()
	es, err := etcd.New(srv.Client(), etcd.Options{Prefix: prefix})
	require.NoError(t, err)
	in := &etcdInstall{t: t, bin: bin, srv: srv, prefix: prefix, url: "etcd://" + srv.Endpoint() + prefix, es: es, work: t.TempDir()}
	in.fences = watchFences(t, srv.Client(), strings.TrimSuffix(prefix, "/")+".leader/"+gateway.CronRole+"/")
	return in
}

// fenceLog is the history of the cron election's leader keys, from the
// test's own watch: the revision at which each member's key was made
// (it was elected) and deleted (it resigned, left, or its lease ended).
// A write fenced on a leadership commits only between the two.
type fenceLog struct {
	mu      sync.Mutex
	elected map[string]int64
	ended   map[string]int64
}

// watchFences starts watching the leader keys under prefix from the
// current revision on, until the test ends.
func watchFences(t *testing.T, cli *clientv3.Client, prefix string) *fenceLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	now, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	l := &fenceLog{elected: map[string]int64{}, ended: map[string]int64{}}
	w := cli.Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithRev(now.Header.Revision+1))
	go func() {
		for resp := range w {
			l.mu.Lock()
			for _, ev := range resp.Events {
				switch {
				case ev.Type == clientv3.EventTypePut && ev.IsCreate():
					l.elected[string(ev.Kv.Value)] = ev.Kv.ModRevision
				case ev.Type == clientv3.EventTypeDelete && ev.PrevKv != nil:
					l.ended[string(ev.PrevKv.Value)] = ev.Kv.ModRevision
				}
			}
			l.mu.Unlock()
		}
	}()
	return l
}

// end returns the revision at which member's leadership ended, or 0.
func (l *fenceLog) end(member string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended[member]
}

// clusterGateway is one `flowgate gateway` process of the installation,
// on a home of its own whose gateway.yaml names the etcd store and the
// lease.
type clusterGateway struct {
	in   *etcdInstall
	name string
	home string
	log  *os.File
	proc *gatewayProc
	id   string // member id, once started
}

// gateway makes (and does not start) a gateway named name.
func (in *etcdInstall) gateway(name string) *clusterGateway {
	t := in.t
	t.Helper()
	home, err := os.MkdirTemp("", "fgc") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	cfg := fmt.Sprintf("store: %s\ncluster:\n  lease_ttl: %s\n", in.url, clusterLeaseTTL)
	require.NoError(t, os.WriteFile(filepath.Join(home, gateway.ConfigFile), []byte(cfg), 0o600))
	logf, err := os.Create(filepath.Join(in.work, name+".log"))
	require.NoError(t, err)
	g := &clusterGateway{in: in, name: name, home: home, log: logf}
	t.Cleanup(func() {
		g.reap()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("gateway %s log:\n%s", name, b)
		}
		logf.Close()
	})
	return g
}

// tryStart starts the gateway and waits, bounded, until its socket
// answers (true), or until it exits refused because another gateway
// holds the installation (false): the one-gateway hold. Any other exit
// fails the test.
func (g *clusterGateway) tryStart() bool {
	t := g.in.t
	t.Helper()
	from, err := g.log.Seek(0, 2)
	require.NoError(t, err)
	cmd := exec.Command(g.in.bin, "gateway", "--home", g.home, "--log-level", "debug")
	cmd.Stdout, cmd.Stderr = g.log, g.log
	require.NoError(t, cmd.Start())
	p := &gatewayProc{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := api.DialRemote(gateway.SocketPath(g.home)); err == nil {
			c.Close()
			g.proc = p
			g.id = g.in.memberOf(cmd.Process.Pid)
			return true
		}
		select {
		case <-p.done:
			b, _ := os.ReadFile(g.log.Name())
			out := string(b[from:])
			require.Contains(t, out, "is held by", "gateway %s exited at start (%v) for another reason than the hold", g.name, cmd.ProcessState)
			return false
		default:
		}
		require.True(t, time.Now().Before(deadline), "gateway %s: socket did not answer in 20s", g.name)
		time.Sleep(20 * time.Millisecond)
	}
}

// startWhenLetIn starts the gateway, again while the installation is
// held by another, until it serves (bounded).
func (g *clusterGateway) startWhenLetIn() {
	t := g.in.t
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !g.tryStart() {
		require.True(t, time.Now().Before(deadline), "gateway %s was refused for 30s", g.name)
		time.Sleep(200 * time.Millisecond)
	}
}

// signal sends sig to the gateway process.
func (g *clusterGateway) signal(sig syscall.Signal) {
	g.in.t.Helper()
	require.NoError(g.in.t, g.proc.cmd.Process.Signal(sig))
}

// stop ends the gateway gracefully (SIGTERM) and waits, bounded, for it.
func (g *clusterGateway) stop() {
	t := g.in.t
	t.Helper()
	g.signal(syscall.SIGTERM)
	select {
	case <-g.proc.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("gateway %s did not stop within 30s of SIGTERM", g.name)
	}
}

// kill ends the gateway with SIGKILL.
func (g *clusterGateway) kill() {
	g.in.t.Helper()
	g.signal(syscall.SIGKILL)
	<-g.proc.done
}

// reap kills the gateway if it still runs (paused or not).
func (g *clusterGateway) reap() {
	if g.proc == nil {
		return
	}
	select {
	case <-g.proc.done:
	default:
		_ = g.proc.cmd.Process.Signal(syscall.SIGCONT)
		_ = g.proc.cmd.Process.Kill()
		<-g.proc.done
	}
}

// logged says whether the gateway's log holds s.
func (g *clusterGateway) logged(s string) bool {
	b, err := os.ReadFile(g.log.Name())
	return err == nil && bytes.Contains(b, []byte(s))
}

// memberOf returns the member id of the gateway process pid, which has
// joined (its socket answers only after it has).
func (in *etcdInstall) memberOf(pid int) string {
	in.t.Helper()
	members, err := in.es.Members(context.Background())
	require.NoError(in.t, err)
	for _, m := range members {
		if m.PID == pid {
			return m.ID
		}
	}
	in.t.Fatalf("no member has pid %d: %+v", pid, members)
	return ""
}

// waitLeader waits, bounded, until a member leads cron that is none of
// not, and returns its id.
func (in *etcdInstall) waitLeader(not ...string) string {
	in.t.Helper()
	var leader string
	waitUntil(in.t, "a new cron leader", 30*time.Second, func() bool {
		var err error
		leader, err = in.es.Leader(context.Background(), gateway.CronRole)
		require.NoError(in.t, err)
		return leader != "" && !slices.Contains(not, leader)
	})
	return leader
}

// flowgate runs the flowgate command with args and returns its output.
func (in *etcdInstall) flowgate(args ...string) string {
	in.t.Helper()
	out, err := exec.Command(in.bin, args...).CombinedOutput()
	require.NoError(in.t, err, "flowgate %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// addEverySecond adds, through g, a cron job named name that runs every
// second and appends its scheduled time to ledger; runs may overlap, and
// catchUp is its --catchup-window ("" for the default). It returns the
// job's id.
func (in *etcdInstall) addEverySecond(g *clusterGateway, name, ledger, catchUp string) string {
	in.t.Helper()
	args := []string{"--home", g.home, "cron", "add", "--json", "--name", name, "--every", "1s", "--overlap", "allow_all",
		"--command", `echo "$FLOWGATE_CRON_SCHEDULED" >> ` + ledger}
	if catchUp != "" {
		args = append(args, "--catchup-window", catchUp)
	}
	var j scheduler.Job
	require.NoError(in.t, json.Unmarshal([]byte(in.flowgate(args...)), &j))
	return j.ID
}

// storedRun is a run as the store holds it, with the etcd revision that
// created its record: the claim of its time, or its record as missed.
type storedRun struct {
	scheduler.Run
	created int64
}

// runs reads job's run history straight from etcd, oldest first.
func (in *etcdInstall) runs(job string) []storedRun {
	in.t.Helper()
	resp, err := in.srv.Client().Get(context.Background(), in.prefix+"cron/run/"+job+"/", clientv3.WithPrefix())
	require.NoError(in.t, err)
	var out []storedRun
	for _, kv := range resp.Kvs {
		r := storedRun{created: kv.CreateRevision}
		require.NoError(in.t, json.Unmarshal(kv.Value, &r.Run))
		out = append(out, r)
	}
	return out
}

// history is job's run history as `flowgate cron runs --json` shows it,
// newest first, read with --store (no gateway needed).
func (in *etcdInstall) history(job string) []scheduler.Run {
	in.t.Helper()
	var list struct {
		Runs []scheduler.Run `json:"runs"`
	}
	require.NoError(in.t, json.Unmarshal([]byte(in.flowgate("--store", in.url, "cron", "runs", job, "--json", "--limit", "0")), &list))
	return list.Runs
}

// firedBy counts the runs of rs that member claimed (missed ones aside).
func firedBy(rs []storedRun, member string) int {
	n := 0
	for _, r := range rs {
		if r.Member == member && r.Status != scheduler.RunMissed {
			n++
		}
	}
	return n
}

// waitFired waits, bounded, until member has fired n runs of job.
func (in *etcdInstall) waitFired(job, member string, n int) {
	in.t.Helper()
	waitUntil(in.t, fmt.Sprintf("%s to fire %d runs", member, n), 30*time.Second, func() bool { return firedBy(in.runs(job), member) >= n })
}

// settle disables job (through g) and waits, bounded, until none of its
// runs is open; it returns the history then.
func (in *etcdInstall) settle(g *clusterGateway, job string) []storedRun {
	in.t.Helper()
	in.flowgate("--home", g.home, "cron", "disable", job)
	var rs []storedRun
	waitUntil(in.t, "every run to end", 60*time.Second, func() bool {
		rs = in.runs(job)
		return !slices.ContainsFunc(rs, func(r storedRun) bool { return r.Open() })
	})
	return rs
}

// checkLedger checks that no scheduled time ran twice (each line of
// ledger is unique) and that the ledger and the history agree: every
// line is a run that ended ok, and every run that ended ok ran.
func checkLedger(t *testing.T, ledger string, rs []storedRun) {
	t.Helper()
	b, err := os.ReadFile(ledger)
	require.NoError(t, err)
	ok := map[string]bool{}
	for _, r := range rs {
		if r.Status == scheduler.RunOK {
			ok[r.Scheduled.UTC().Format(time.RFC3339Nano)] = true
		}
	}
	seen := map[string]bool{}
	for _, l := range strings.Fields(string(b)) {
		require.False(t, seen[l], "scheduled time %s ran twice", l)
		seen[l] = true
		require.True(t, ok[l], "scheduled time %s ran, but its run did not end ok in the history", l)
	}
	require.Len(t, seen, len(ok), "every run that ended ok ran exactly once")
}

// waitUntil polls cond every 50 ms until it holds, failing t after
// timeout with what it waited for.
func waitUntil(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "waited %s for %s", timeout, what)
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPausedCronLeaderCannotFireAfterItsLease: gateway a leads cron for
// an --every 1s job, and is paused with SIGSTOP past its lease, as a
// gateway cut off from etcd would be. Gateway b takes over (it campaigns
// beside a where several gateways may serve one installation, else it
// starts once a's lease, and with it a's hold, has ended). a is resumed
// as soon as b leads, before b's first fire, still believing for a moment
// that it leads, so the two race for the next due times. The run history
// and the store prove that a recorded no fire after its lease ended:
// each run names the member that claimed it, and every run a claimed was
// created in etcd before a's leader key was deleted. The ledger proves
// that no time ran twice.
//
// What stops a is the fence on its leadership: it sees its leader key
// deleted before its next claim, and a claim already under way when it
// was paused is refused by etcd (the fence compare), which
// TestDeposedLeaderCannotFire in host/scheduler proves deterministically.
func TestPausedCronLeaderCannotFireAfterItsLease(t *testing.T) {
	in := newEtcdInstall(t)
	ledger := filepath.Join(in.work, "ledger")
	a, b := in.gateway("a"), in.gateway("b")
	require.True(t, a.tryStart(), "the first gateway of an installation was refused")
	job := in.addEverySecond(a, "tick", ledger, "")
	require.Equal(t, a.id, in.waitLeader())
	in.waitFired(job, a.id, 2)

	standby := b.tryStart()
	a.signal(syscall.SIGSTOP)
	paused := time.Now()
	if !standby {
		b.startWhenLetIn()
	}
	require.Equal(t, b.id, in.waitLeader(a.id))
	require.NotZero(t, in.fences.end(a.id), "b leads while a's leader key lives")
	t.Logf("b (started beside a: %v) leads %s after a was paused", standby, time.Since(paused).Round(time.Millisecond))
	a.signal(syscall.SIGCONT)
	waitUntil(t, "a to see that its lease ended", 30*time.Second, func() bool { return a.logged("lost the hold on the etcd installation") })
	in.waitFired(job, b.id, 3)
	rs := in.settle(b, job)
	b.stop()
	a.stop()

	end := in.fences.end(a.id)
	byA := 0
	for _, r := range rs {
		if r.Member == a.id {
			byA++
			require.Less(t, r.created, end, "a recorded %s (%s) at etcd revision %d, after its leadership ended at %d", r.ID, r.Status, r.created, end)
		}
	}
	require.NotZero(t, byA, "a fired nothing before it was paused")
	history := in.history(job)
	require.Len(t, history, len(rs))
	for i, r := range history {
		require.Equal(t, rs[len(rs)-1-i].Run.ID, r.ID)
		require.Equal(t, rs[len(rs)-1-i].Member, r.Member, "cron runs --json names the member that fired %s", r.ID)
	}
	checkLedger(t, ledger, rs)
	t.Logf("a fired %d runs before its lease ended at revision %d; b fired %d; a's claims refused by the fence: %v",
		byA, end, firedBy(rs, b.id), a.logged("fence no longer holds"))
}
