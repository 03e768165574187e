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
	"github.com/flowgate/flowgate/host/engine"
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
	es     *etcd.Store    // the installation, read directly
	eng    *engine.Engine // its records, read directly
	work   string         // ledgers and gateway logs
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
	eng, err := engine.New(es, engine.Config{})
	require.NoError(t, err)
	in := &etcdInstall{t: t, bin: bin, srv: srv, prefix: prefix, url: "etcd://" + srv.Endpoint() + prefix, es: es, eng: eng, work: t.TempDir()}
	in.fences = watchFences(t, srv.Client(), strings.TrimSuffix(prefix, "/")+".leader/"+gateway.CronRole+"/")
	return in
}

// fenceLog is the history of the cron election's leader keys, from the
// test's own watch: the revision at which each member's key was deleted
// (it resigned, left, or its lease ended). A write fenced on a
// member's leadership commits only before then.
type fenceLog struct {
	mu    sync.Mutex
	ended map[string]int64
}

// watchFences starts watching the leader keys under prefix from the
// current revision on, until the test ends.
func watchFences(t *testing.T, cli *clientv3.Client, prefix string) *fenceLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	now, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	l := &fenceLog{ended: map[string]int64{}}
	w := cli.Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithRev(now.Header.Revision+1))
	go func() {
		for resp := range w {
			l.mu.Lock()
			for _, ev := range resp.Events {
				if ev.Type == clientv3.EventTypeDelete && ev.PrevKv != nil {
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

// between waits, bounded, until g has just fired every one of jobs and
// the tasks of their open runs have all ended: a moment between two
// fires, with no task in flight. The leader is paused, killed or stopped
// then, because a task in flight is lost with its gateway (processes are
// local to the gateway that started them), its run is interrupted, and
// an interrupted run is a failure: the job would wait out its failure
// backoff (30 s) and fire nothing meanwhile.
func (in *etcdInstall) between(g *clusterGateway, jobs ...string) {
	in.t.Helper()
	idle := func(job string) bool {
		rs := in.runs(job)
		if len(rs) == 0 || rs[len(rs)-1].Member != g.id {
			return false
		}
		for _, r := range rs {
			if !r.Open() {
				continue
			}
			if r.TaskID == "" {
				return false
			}
			task, err := in.eng.GetTask(r.TaskID)
			if err != nil || !task.Status.Terminal() {
				return false
			}
		}
		return true
	}
	waitUntil(in.t, g.name+" to be between two fires", 30*time.Second, func() bool {
		for _, job := range jobs {
			if !idle(job) {
				return false
			}
		}
		return true
	})
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
	status := map[string]string{}
	ok := 0
	for _, r := range rs {
		status[r.Scheduled.UTC().Format(time.RFC3339Nano)] = r.Status
		if r.Status == scheduler.RunOK {
			ok++
		}
	}
	seen := map[string]bool{}
	for _, l := range strings.Fields(string(b)) {
		require.False(t, seen[l], "scheduled time %s ran twice", l)
		seen[l] = true
		require.Equal(t, scheduler.RunOK, status[l], "scheduled time %s ran, but its run is %q in the history", l, status[l])
	}
	require.Len(t, seen, ok, "runs that ended ok without running")
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
	in.between(a, job)
	a.signal(syscall.SIGSTOP)
	paused := time.Now()
	if !standby {
		b.startWhenLetIn()
	}
	require.Equal(t, b.id, in.waitLeader(a.id))
	require.NotZero(t, in.fences.end(a.id), "b leads while a's leader key lives")
	t.Logf("b (started beside a: %v) leads %s after a was paused", standby, time.Since(paused).Round(time.Millisecond))
	a.signal(syscall.SIGCONT)
	waitUntil(t, "a to see that its lease ended", 30*time.Second, func() bool { return a.logged("the etcd installation (its lease ended)") })
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

// TestCronFiresOnceAcrossTwoLeaderChanges: three gateway processes take
// the lead of cron in turn (the first is killed with SIGKILL, the second
// stopped gracefully, each time the next takes over) while two --every
// 1s jobs run. Checked against the run history, the store and a ledger
// of what ran:
//
//   - no scheduled time ran twice, and every run that ended ok ran;
//   - the history holds every scheduled time from the first to the last,
//     once: each leader fired every time due while it led;
//   - each time was recorded by the leader of the moment, while it led
//     (etcd revisions against the leader keys' deletions), the leaders
//     in turn;
//   - the misfire policy held for the gaps between leaders. With
//     --catchup-window 1m, the next leader runs every time of the gap,
//     late, so nothing is missed. With the default (no window), it runs
//     the latest time due and records the earlier ones "missed"; so a
//     missed time is only ever recorded by the leader that took over,
//     after another leader's last run, just before its own first run.
func TestCronFiresOnceAcrossTwoLeaderChanges(t *testing.T) {
	in := newEtcdInstall(t)
	a, b, c := in.gateway("a"), in.gateway("b"), in.gateway("c")
	require.True(t, a.tryStart(), "the first gateway of an installation was refused")
	type cronJob struct {
		id, ledger string
		caughtUp   bool
	}
	var jobs []cronJob
	for _, caughtUp := range []bool{true, false} {
		j := cronJob{ledger: filepath.Join(in.work, fmt.Sprintf("ledger-%v", caughtUp)), caughtUp: caughtUp}
		window := ""
		if caughtUp {
			window = "1m"
		}
		j.id = in.addEverySecond(a, fmt.Sprintf("catch-up-%v", caughtUp), j.ledger, window)
		jobs = append(jobs, j)
	}
	require.Equal(t, a.id, in.waitLeader())
	fireAll := func(g *clusterGateway) {
		t.Helper()
		for _, j := range jobs {
			in.waitFired(j.id, g.id, 3)
		}
	}
	fireAll(a)

	ids := []string{jobs[0].id, jobs[1].id}
	standby := b.tryStart()
	in.between(a, ids...)
	a.kill()
	if !standby {
		b.startWhenLetIn()
	}
	require.Equal(t, b.id, in.waitLeader(a.id))
	fireAll(b)

	standby = c.tryStart()
	in.between(b, ids...)
	b.stop()
	if !standby {
		c.startWhenLetIn()
	}
	require.Equal(t, c.id, in.waitLeader(a.id, b.id))
	fireAll(c)

	leaders := []string{a.id, b.id, c.id}
	for _, j := range jobs {
		rs := in.settle(c, j.id)
		checkLedger(t, j.ledger, rs)
		checkLeaders(t, in.fences, leaders, rs)
		checkTimes(t, rs, j.caughtUp)
		t.Logf("job %s (catch-up window: %v): %d times, %d by a, %d by b, %d by c", j.id, j.caughtUp, len(rs), firedBy(rs, a.id), firedBy(rs, b.id), firedBy(rs, c.id))
	}
	c.stop()
}

// checkLeaders checks that each run (oldest first) was recorded by one of
// leaders, in their turn, while it led: after the leadership before its
// own ended, and before its own ended.
func checkLeaders(t *testing.T, fences *fenceLog, leaders []string, rs []storedRun) {
	t.Helper()
	turn := 0
	for _, r := range rs {
		i := slices.Index(leaders, r.Member)
		require.GreaterOrEqual(t, i, turn, "%s (%s) was recorded by %q, out of the leaders' turn %v", r.ID, r.Status, r.Member, leaders)
		turn = i
		if i > 0 {
			require.Greater(t, r.created, fences.end(leaders[i-1]), "%s was recorded by %s before %s's leadership ended", r.ID, r.Member, leaders[i-1])
		}
		if end := fences.end(r.Member); end != 0 {
			require.Less(t, r.created, end, "%s was recorded by %s after its leadership ended", r.ID, r.Member)
		}
	}
}

// describe lists rs one a line, for a failure's message.
func describe(rs []storedRun) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "%s %-11s by %s at revision %d\n", r.Scheduled.Format("15:04:05.000"), r.Status, r.Member, r.created)
	}
	return b.String()
}

// checkTimes checks that rs (oldest first) holds every scheduled time of
// an --every 1s job from its first to its last, once, and that the
// misfire policy held: with a catch-up window no time is missed; without
// one a time is missed only in a gap between two leaders, recorded by the
// new leader, whose first run follows it.
func checkTimes(t *testing.T, rs []storedRun, caughtUp bool) {
	t.Helper()
	for i := 1; i < len(rs); i++ {
		require.Equal(t, time.Second, rs[i].Scheduled.Sub(rs[i-1].Scheduled), "the history skips from %s to %s", rs[i-1].Scheduled, rs[i].Scheduled)
	}
	fired := func(r storedRun) bool { return r.Status != scheduler.RunMissed }
	for i, r := range rs {
		if fired(r) {
			require.Equal(t, scheduler.RunOK, r.Status, "%s fired but did not end ok: %s", r.ID, r.Error)
			continue
		}
		require.False(t, caughtUp, "%s is missed although the catch-up window covers every gap", r.ID)
		before := -1
		for j := i - 1; j >= 0 && before < 0; j-- {
			if fired(rs[j]) {
				before = j
			}
		}
		after := slices.IndexFunc(rs[i:], fired)
		require.NotEqual(t, -1, after, "%s is missed after the last run", r.ID)
		after += i
		require.Equal(t, rs[after].Member, r.Member, "%s was recorded missed by %s, not by the leader that ran the next time", r.ID, r.Member)
		require.NotEqual(t, -1, before, "%s is missed before the first run", r.ID)
		require.NotEqual(t, rs[before].Member, r.Member, "%s was missed while %s led: a leader let a time due pass; the history:\n%s", r.ID, r.Member, describe(rs))
	}
}
