package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/cli"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/sdk"
)

// TestClusterOnBolt: on a home's bbolt store, cluster status says there
// is one gateway and no members, and drain is refused, saying why.
func TestClusterOnBolt(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	code, out, errOut := run(t, home, "cluster", "status")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "is bbolt: one gateway serves it, and it has no cluster members")
	code, out, errOut = run(t, home, "cluster", "status", "--json")
	require.Equal(t, 0, code, errOut)
	var st cli.ClusterStatus
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	require.Equal(t, "bolt", st.Backend)
	require.Empty(t, st.Members)
	code, _, errOut = run(t, home, "cluster", "drain", "x.1")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "served by one gateway; there are no members to drain")
}

// etcdInstallation opens a store on a fresh prefix of the shared etcd and
// returns the URL a command reaches that same installation by.
func etcdInstallation(t *testing.T) (string, *etcd.Store) {
	t.Helper()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix() // each call gives a new prefix: take one
	st, err := etcd.New(srv.Client(), etcd.Options{Prefix: prefix})
	require.NoError(t, err)
	return "etcd://" + srv.Endpoint() + prefix, st
}

// TestClusterStatusAndDrainOnEtcd lists the members of an etcd
// installation with their labels, leases and load, and drains one by id.
func TestClusterStatusAndDrainOnEtcd(t *testing.T) {
	t.Parallel()
	url, st := etcdInstallation(t)
	ctx := context.Background()
	m, err := st.Join(ctx, etcd.MemberInfo{ID: "node-a.42", Host: "node-a", PID: 42, Address: "10.0.0.1:7070", Labels: []string{"gpu"}}, 5,
		func() etcd.MemberLoad { return etcd.MemberLoad{Running: 7, MaxRunning: 4} })
	require.NoError(t, err)
	t.Cleanup(func() { m.Leave(context.Background()) })
	home := t.TempDir()
	code, out, errOut := run(t, home, "--store", url, "cluster", "status")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Cron leader: none (no member leads)")
	lead := m.Campaign(gateway.CronRole)
	require.Eventually(t, func() bool { _, ok := lead.Fence(); return ok }, 20*time.Second, 20*time.Millisecond, "the only member never led")

	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	for _, gw := range []string{"node-a.42", "node-z.9"} {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "on-" + gw, Spec: sdk.TaskSpec{Shell: "true"}})
		require.NoError(t, err)
		_, err = eng.StartTask(task.ID, engine.StartInput{Gateway: gw})
		require.NoError(t, err)
	}

	code, out, errOut = run(t, home, "--store", url, "cluster", "status")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Cron leader: node-a.42")
	require.Contains(t, out, "Running tasks of gateways that are no longer members: 1")
	require.Regexp(t, `node-a\.42\s+10\.0\.0\.1:7070\s+gpu\s+\d+s of 5s\s+\S+\s+1/4\s+0\s+active`, out, "the task it started counts")
	require.Contains(t, out, "Queued tasks for any member: 0")

	code, _, errOut = run(t, home, "--store", url, "cluster", "drain", "node-b.1")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "node-b.1 is not a member")
	code, out, errOut = run(t, home, "--store", url, "cluster", "drain", "node-a.42")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Drained node-a.42")

	code, out, errOut = run(t, home, "--store", url, "cluster", "status", "--json")
	require.Equal(t, 0, code, errOut)
	var status cli.ClusterStatus
	require.NoError(t, json.Unmarshal([]byte(out), &status))
	require.Equal(t, "etcd", status.Backend)
	require.Len(t, status.Members, 1)
	require.True(t, status.Members[0].Draining)
	require.Equal(t, []string{"gpu"}, status.Members[0].Labels)
	require.Equal(t, 5, status.Members[0].TTL)
	require.Equal(t, "node-a.42", status.Leader)
	require.Equal(t, map[string]int{"node-a.42": 1, "node-z.9": 1}, status.Running)
	require.Equal(t, 1, status.Orphaned)
}

// TestRunOnLabel: tasks run --on LABEL records the label the task asks
// for; a label that is no word is refused.
func TestRunOnLabel(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	code, stdout, errOut := run(t, home, "tasks", "run", "--detach", "--json", "--on", "gpu", "--", "true")
	require.Equal(t, 0, code, errOut)
	var task apitype.Task
	require.NoError(t, json.Unmarshal([]byte(stdout), &task), stdout)
	require.Equal(t, "gpu", task.Spec.On)
	code, _, errOut = run(t, home, "tasks", "run", "--detach", "--on", "gpu cpu", "--", "true")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "is not a label")
}

// TestClusterStatusShowsQueuedTasksPerMember: a queued task that asks for
// a label counts for every member carrying it, one that asks for none is
// the installation's, and one whose label no member carries is shown as
// waiting for one. Before, status showed only the installation's total.
func TestClusterStatusShowsQueuedTasksPerMember(t *testing.T) {
	t.Parallel()
	url, st := etcdInstallation(t)
	ctx := context.Background()
	for _, info := range []etcd.MemberInfo{
		{ID: "node-a.1", Host: "node-a", PID: 1, Labels: []string{"gpu"}},
		{ID: "node-b.2", Host: "node-b", PID: 2, Labels: []string{"gpu", "arm"}},
		{ID: "node-c.3", Host: "node-c", PID: 3},
	} {
		m, err := st.Join(ctx, info, 5, nil)
		require.NoError(t, err)
		t.Cleanup(func() { m.Leave(context.Background()) })
	}
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	for i, on := range []string{"", "", "gpu", "arm", "arm", "tpu"} {
		_, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: fmt.Sprintf("q-%d", i), Spec: sdk.TaskSpec{Shell: "true", On: on}})
		require.NoError(t, err)
	}

	home := t.TempDir()
	code, out, errOut := run(t, home, "--store", url, "cluster", "status", "--json")
	require.Equal(t, 0, code, errOut)
	var status cli.ClusterStatus
	require.NoError(t, json.Unmarshal([]byte(out), &status))
	require.Equal(t, 2, status.Queued)
	require.Equal(t, map[string]int{"node-a.1": 1, "node-b.2": 3}, status.QueuedOn)
	require.Equal(t, 1, status.Unplaced)

	code, out, errOut = run(t, home, "--store", url, "cluster", "status")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `node-a\.1\s.*\s0/0\s+1\s+active`, out)
	require.Regexp(t, `node-b\.2\s.*\s0/0\s+3\s+active`, out)
	require.Regexp(t, `node-c\.3\s.*\s0/0\s+0\s+active`, out)
	require.Contains(t, out, "Queued tasks for any member: 2")
	require.Contains(t, out, "Queued tasks asking for a label no member carries: 1")
}

// TestBenchStoreNeedsAReachableEtcd: flowgate bench --store with no etcd
// at the address fails, naming the endpoint and what to check, and a
// bbolt URL is refused (bench measures bbolt on every run).
func TestBenchStoreNeedsAReachableEtcd(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	code, _, errOut := run(t, home, "--store", "etcd://"+addr+"/flowgate", "bench", "--quick", "--no-lobster", "--dir", t.TempDir())
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, addr)
	require.Contains(t, errOut, "open the etcd store")
	code, _, errOut = run(t, home, "--store", "bolt:///tmp/x.db", "bench")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "bench --store takes an etcd:// URL")
}
