package cli_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/cli"
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

// TestClusterStatusAndDrainOnEtcd lists the members of an etcd
// installation with their labels, leases and load, and drains one by id.
func TestClusterStatusAndDrainOnEtcd(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	url := "etcd://" + srv.Endpoint() + prefix
	st, err := etcd.New(srv.Client(), etcd.Options{Prefix: prefix})
	require.NoError(t, err)
	ctx := context.Background()
	m, err := st.Join(ctx, etcd.MemberInfo{ID: "node-a.42", Host: "node-a", PID: 42, Address: "10.0.0.1:7070", Labels: []string{"gpu"}}, 5,
		func() etcd.MemberLoad { return etcd.MemberLoad{Running: 7, MaxRunning: 4} })
	require.NoError(t, err)
	t.Cleanup(func() { m.Leave() })
	home := t.TempDir()
	code, out, errOut := run(t, home, "--store", url, "cluster", "status")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Cron leader: none (no member leads)")
	lead := m.Campaign(gateway.CronRole)
	deadline := time.Now().Add(20 * time.Second)
	for _, ok := lead.Fence(); !ok; _, ok = lead.Fence() {
		require.True(t, time.Now().Before(deadline), "the only member never led")
		time.Sleep(20 * time.Millisecond)
	}

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
	require.Regexp(t, `node-a\.42\s+10\.0\.0\.1:7070\s+gpu\s+\d+s of 5s\s+\S+\s+1/4\s+active`, out, "the task it started counts")
	require.Contains(t, out, "Queued tasks (not yet taken by a member): 0")

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
	var task sdk.Task
	require.NoError(t, json.Unmarshal([]byte(stdout), &task), stdout)
	require.Equal(t, "gpu", task.Spec.On)
	code, _, errOut = run(t, home, "tasks", "run", "--detach", "--on", "gpu cpu", "--", "true")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "is not a label")
}
