package scheduler_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// cronNode is one gateway's cron on a shared etcd installation: its own
// client, store, membership, campaign and scheduler.
type cronNode struct {
	env    *loopEnv
	store  *etcd.Store
	member *etcd.Member
	lead   *etcd.Leadership
}

// newCronNodes starts n nodes on one fresh prefix, each campaigning for
// cron.
func newCronNodes(t *testing.T, n int) []*cronNode {
	t.Helper()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	var nodes []*cronNode
	for i := range n {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		require.NoError(t, err)
		t.Cleanup(func() { cli.Close() })
		st, err := etcd.New(cli, etcd.Options{Prefix: prefix})
		require.NoError(t, err)
		m, err := st.Join(context.Background(), etcd.MemberInfo{ID: nodeID(i)}, 2, nil)
		require.NoError(t, err)
		t.Cleanup(func() { m.Leave(context.Background()) })
		lead := m.Campaign("cron")
		nodes = append(nodes, &cronNode{env: newLoopEnvOn(t, st, scheduler.Config{Leader: lead, Member: m.ID()}), store: st, member: m, lead: lead})
	}
	return nodes
}

// nodeID is the member id of node i.
func nodeID(i int) string { return fmt.Sprintf("node-%d", i) }

// leader waits until exactly one node other than not leads, and returns
// its index.
func leader(t *testing.T, nodes []*cronNode, not int) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		at := -1
		count := 0
		for i, n := range nodes {
			if _, ok := n.lead.Fence(); ok {
				at, count = i, count+1
			}
		}
		if count == 1 && at != not {
			return at
		}
		require.True(t, time.Now().Before(deadline), "no single new leader within 20s")
		time.Sleep(20 * time.Millisecond)
	}
}

// tickAll sets every node's clock to at and ticks each.
func tickAll(t *testing.T, nodes []*cronNode, at time.Time) {
	t.Helper()
	for _, n := range nodes {
		n.env.clock.set(at)
		require.NoError(t, n.env.sched.TickOnce(context.Background()))
	}
}

// TestEveryOneSecondFiresOnceAcrossLeaderChanges: three gateways
// campaign for cron; an --every 1s job fires exactly once per scheduled
// time, with no time missed, while the leader resigns and then its
// session closes. The run history and the tasks (one per fire) prove it,
// and each run names the leader that fired it.
func TestEveryOneSecondFiresOnceAcrossLeaderChanges(t *testing.T) {
	t.Parallel()
	nodes := newCronNodes(t, 3)
	j := nodes[0].env.add(scheduler.JobInput{Name: "every-second", Schedule: schedule.Flags{Every: "1s"}, Command: "echo hi", Overlap: "allow_all"})
	first := leader(t, nodes, -1)
	const seconds = 15
	var leaders []int
	current := first
	for s := 1; s <= seconds; s++ {
		switch s {
		case 6: // a leader that resigns hands over to the next in line
			nodes[current].lead.Resign()
			current = leader(t, nodes, current)
		case 11: // a leader whose session closes (its gateway stops)
			require.NoError(t, nodes[current].member.Leave(context.Background()))
			current = leader(t, nodes, current)
		}
		leaders = append(leaders, current)
		tickAll(t, nodes, t0.Add(time.Duration(s)*time.Second+100*time.Millisecond))
	}
	require.NotEqual(t, leaders[0], leaders[5])
	require.NotEqual(t, leaders[5], leaders[10])

	runs := nodes[current].env.runs(j.ID)
	require.Equal(t, map[string]int{scheduler.RunRunning: len(runs)}, byStatus(runs), "every time fired; none missed or skipped")
	seen := map[time.Time]bool{}
	for _, r := range runs {
		require.False(t, seen[r.Scheduled], "%s fired twice", r.Scheduled)
		seen[r.Scheduled] = true
		require.Equal(t, scheduler.TriggerSchedule, r.Trigger)
		s := int(r.Scheduled.Sub(t0) / time.Second)
		require.Equal(t, nodeID(leaders[s-1]), r.Member, "the run at second %d names the leader of that tick", s)
	}
	for i := 1; i < len(runs); i++ {
		require.Equal(t, time.Second, runs[i-1].Scheduled.Sub(runs[i].Scheduled), "a scheduled time is missing between runs")
	}
	require.GreaterOrEqual(t, len(runs), seconds-1)
	require.Len(t, nodes[current].env.tasks("cron:"+j.ID), len(runs), "one task per fire")
}

// staleLeader is a scheduler that believes it still leads with fence f:
// a gateway paused (or cut off from etcd) past its lease, which has not
// noticed yet.
type staleLeader struct{ f store.Fence }

func (s staleLeader) Fence() (store.Fence, bool) { return s.f, true }

// TestDeposedLeaderCannotFire: a leader whose lease is lost (revoked
// here, as etcd does when a paused gateway stops renewing it) and that
// still believes it leads cannot record a fire: its claim is fenced on
// the leader key, which is gone. The new leader fires that time, once.
func TestDeposedLeaderCannotFire(t *testing.T) {
	t.Parallel()
	nodes := newCronNodes(t, 2)
	j := nodes[0].env.add(scheduler.JobInput{Name: "every-second", Schedule: schedule.Flags{Every: "1s"}, Command: "echo hi", Overlap: "allow_all"})
	old := leader(t, nodes, -1)
	fence, ok := nodes[old].lead.Fence()
	require.True(t, ok)
	stale := scheduler.New(nodes[old].env.eng, scheduler.Config{Leader: staleLeader{fence}, Now: nodes[old].env.clock.now})

	sharedEtcd.Get(t).EndLease(t, nodes[old].store, nodes[old].member.ID())
	next := leader(t, nodes, old)

	at := t0.Add(time.Second + 100*time.Millisecond)
	nodes[old].env.clock.set(at)
	err := stale.TickOnce(context.Background())
	require.ErrorIs(t, err, store.ErrFenced, "the deposed leader's claim went through")
	require.Empty(t, nodes[next].env.runs(j.ID), "the deposed leader recorded a fire")

	tickAll(t, []*cronNode{nodes[next]}, at)
	runs := nodes[next].env.runs(j.ID)
	require.Len(t, runs, 1)
	require.Equal(t, scheduler.RunRunning, runs[0].Status)
}

// TestRunsNameTheirMember: a scheduler given its member id records it on
// every run it claims, by schedule or by hand, and on every time it
// records missed.
func TestRunsNameTheirMember(t *testing.T) {
	t.Parallel()
	env := newLoopEnv(t, scheduler.Config{Member: "node-a.42"})
	j := env.add(scheduler.JobInput{Name: "every-second", Schedule: schedule.Flags{Every: "1s"}, Command: "echo hi", Overlap: "allow_all"})
	env.tickAt(t0.Add(1100 * time.Millisecond))
	env.tickAt(t0.Add(8100 * time.Millisecond)) // downtime: 2s to 7s are missed, 8s runs
	_, err := env.sched.RunNow(j.ID, "")
	require.NoError(t, err)
	runs := env.runs(j.ID)
	require.Equal(t, map[string]int{scheduler.RunRunning: 3, scheduler.RunMissed: 6}, byStatus(runs))
	for _, r := range runs {
		require.Equal(t, "node-a.42", r.Member, "run %s (%s)", r.ID, r.Status)
	}
}
