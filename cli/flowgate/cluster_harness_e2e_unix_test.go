//go:build unix

package main_test

import (
	"bytes"
	"context"
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
	e := startEtcdInstallation(t)
	in := &etcdInstall{t: t, bin: bin, srv: e.srv, prefix: e.prefix, url: e.url, es: e.es, eng: e.eng, work: t.TempDir()}
	in.fences = watchFences(t, e.srv.Client(), strings.TrimSuffix(e.prefix, "/")+".leader/"+gateway.CronRole+"/")
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
