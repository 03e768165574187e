//go:build unix

package main_test

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/sdk"
)

// lostLease is what a gateway logs when it sees its lease end.
const lostLease = "the etcd installation (its lease ended)"

// gatewayStopTimeout is how long `flowgate gateway` takes at most to
// stop after SIGTERM.
const gatewayStopTimeout = 15 * time.Second

// newProcessFleet starts an etcd server process and returns it with an
// installation on it whose gateways hold leases of clusterLeaseTTL.
func newProcessFleet(t *testing.T) (*etcdProcess, *fleet) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end run with real gateway processes on an etcd process")
	}
	p := startEtcdProcess(t)
	return p, &fleet{t: t, bin: buildFlowgate(t), embeddedInstallation: p.installation(), work: t.TempDir(), ttl: clusterLeaseTTL}
}

// leases are the leases of the members of f, by the pid of their gateway.
func (f *fleet) leases() map[int]int64 {
	f.t.Helper()
	members, err := f.es.Members(context.Background())
	require.NoError(f.t, err)
	out := map[int]int64{}
	for _, m := range members {
		out[m.PID] = m.Lease
	}
	return out
}

// rejoined says whether every gateway of gs is a member under a lease
// other than the one it held in before, and a member leads cron.
func (f *fleet) rejoined(before map[int]int64, gs ...*fleetMember) (bool, string) {
	members, err := f.es.Members(context.Background())
	if err != nil {
		return false, fmt.Sprintf("list the members: %v", err)
	}
	for _, g := range gs {
		pid := g.cmd.Process.Pid
		if !slices.ContainsFunc(members, func(m etcd.MemberRecord) bool { return m.PID == pid && m.Lease != before[pid] }) {
			return false, fmt.Sprintf("gateway %s (pid %d) is no member under a new lease: members %+v", g.name, pid, members)
		}
	}
	leader, err := f.es.Leader(context.Background(), gateway.CronRole)
	if err != nil || !slices.ContainsFunc(members, func(m etcd.MemberRecord) bool { return m.ID == leader }) {
		return false, fmt.Sprintf("the cron leader is %q (%v), no member of %+v", leader, err, members)
	}
	return true, ""
}

// runsOn queues a task that only g may run (--on its name) and waits,
// bounded, until it has succeeded.
func (f *fleet) runsOn(g *fleetMember) {
	f.t.Helper()
	task, _, err := f.eng.CreateTask(engine.CreateTaskInput{OwnerKey: "rejoin", Label: "after-" + g.name,
		Spec: sdk.TaskSpec{Shell: "true", On: g.name, Cwd: f.work}})
	require.NoError(f.t, err)
	polltest.Until(f.t, "", func() (bool, string) {
		now, err := f.eng.GetTask(task.ID)
		require.NoError(f.t, err)
		require.NotEqual(f.t, sdk.TaskFailed, now.Status, "task %s on %s: %v", task.ID, g.name, now.Errors)
		return now.Status == sdk.TaskSucceeded, fmt.Sprintf("task %s for gateway %s is %s", task.ID, g.name, now.Status)
	}, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
}

// TestGatewaysRejoinAfterEtcdOutage: two gateway processes serve an etcd
// process that is killed (SIGKILL) for longer than their lease, so that
// both see their lease end, then started again on the same data. Within
// a lease TTL and some slack of etcd answering again, each gateway is a
// member again under a new lease, one of them leads cron, and a task
// queued afterwards for each (by label) runs.
func TestGatewaysRejoinAfterEtcdOutage(t *testing.T) {
	p, f := newProcessFleet(t)
	a, b := f.join("a"), f.join("b")
	polltest.Until(t, "a cron leader", func() bool { ok, _ := f.rejoined(nil, a, b); return ok }, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
	before := f.leases()

	p.kill()
	polltest.Until(t, "both gateways to see their lease end", func() bool { return a.logged(lostLease) && b.logged(lostLease) }, polltest.Within(10*clusterLeaseTTL), polltest.Every(50*time.Millisecond))
	p.start()
	back := time.Now()
	polltest.Until(t, "", func() (bool, string) { return f.rejoined(before, a, b) }, polltest.Within(clusterLeaseTTL+20*time.Second), polltest.Every(50*time.Millisecond))
	t.Logf("both gateways rejoined %s after etcd answered again", time.Since(back).Round(time.Millisecond))
	f.runsOn(a)
	f.runsOn(b)
	a.stop(t)
	b.stop(t)
	require.True(t, a.cmd.ProcessState.Success(), "gateway a stopped with %v", a.cmd.ProcessState)
}

// TestGatewayStopsOnSIGTERMWhileEtcdIsDown: a gateway whose etcd is
// gone exits within its stop timeout of SIGTERM, both before and after
// it sees its lease end.
func TestGatewayStopsOnSIGTERMWhileEtcdIsDown(t *testing.T) {
	p, f := newProcessFleet(t)
	a, b := f.join("a"), f.join("b")
	p.kill()
	b.signal(t, syscall.SIGTERM)
	stoppedWithin(t, b)
	polltest.Until(t, "gateway a to see its lease end", func() bool { return a.logged(lostLease) }, polltest.Within(10*clusterLeaseTTL), polltest.Every(50*time.Millisecond))
	a.signal(t, syscall.SIGTERM)
	stoppedWithin(t, a)
}

// stoppedWithin waits, bounded by the gateway's stop timeout and some
// slack, until g has exited.
func stoppedWithin(t *testing.T, g *fleetMember) {
	t.Helper()
	sent := time.Now()
	select {
	case <-g.done:
		t.Logf("gateway %s exited %s after SIGTERM: %v", g.name, time.Since(sent).Round(time.Millisecond), g.cmd.ProcessState)
	case <-time.After(gatewayStopTimeout + 5*time.Second):
		g.signal(t, syscall.SIGQUIT) // its goroutines, into the log printed below
		<-g.done
		t.Fatalf("gateway %s did not exit within %s of SIGTERM", g.name, gatewayStopTimeout+5*time.Second)
	}
}

// TestGatewayThatCannotRejoinExitsNonZero: a gateway whose etcd stays
// down for longer than it keeps trying to join again (gateway.RejoinTTLs
// lease TTLs) stops by itself and exits 1, so that its service manager
// starts it again, with an error that says why.
func TestGatewayThatCannotRejoinExitsNonZero(t *testing.T) {
	p, f := newProcessFleet(t)
	a := f.join("a")
	p.kill()
	polltest.Until(t, "gateway a to see its lease end", func() bool { return a.logged(lostLease) }, polltest.Within(10*clusterLeaseTTL), polltest.Every(50*time.Millisecond))
	select {
	case <-a.done:
	case <-time.After(gateway.RejoinTTLs*clusterLeaseTTL + 30*time.Second):
		t.Fatalf("gateway a still runs %s after etcd went down", gateway.RejoinTTLs*clusterLeaseTTL+30*time.Second)
	}
	require.Equal(t, 1, a.cmd.ProcessState.ExitCode(), "gateway a exited with %v", a.cmd.ProcessState)
	require.True(t, a.logged("could not join it again within"), "the gateway says why it exits")
}

// TestPausedGatewayRejoins: a gateway paused (SIGSTOP) until its lease
// ended, while etcd and another gateway ran on, joins again by itself
// when it goes on (SIGCONT), within a lease TTL and some slack: a member
// under a new lease, and a task queued for it afterwards runs on it.
func TestPausedGatewayRejoins(t *testing.T) {
	_, f := newProcessFleet(t)
	a, b := f.join("a"), f.join("b")
	before := f.leases()
	a.signal(t, syscall.SIGSTOP)
	polltest.Until(t, "gateway a's lease to end", func() bool { return !f.isMember(a) }, polltest.Within(10*clusterLeaseTTL), polltest.Every(50*time.Millisecond))
	a.signal(t, syscall.SIGCONT)
	resumed := time.Now()
	polltest.Until(t, "", func() (bool, string) { return f.rejoined(before, a) }, polltest.Within(clusterLeaseTTL+20*time.Second), polltest.Every(50*time.Millisecond))
	require.True(t, a.logged(lostLease), "gateway a saw its lease end")
	t.Logf("gateway a rejoined %s after it went on", time.Since(resumed).Round(time.Millisecond))
	f.runsOn(a)
	f.runsOn(b)
}
