package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
)

// TestCommandsOnAHomeUseTheStoreItsGatewayServes starts a real gateway
// on an embedded etcd with --store on the command line (its home's
// gateway.yaml names no store) and runs commands on that home with no
// store flag: cluster status shows the gateway as a member, not "bbolt
// … no cluster members", and once the gateway has stopped, tasks list
// still reads the etcd store it served, where the task it ran is.
func TestCommandsOnAHomeUseTheStoreItsGatewayServes(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway on an embedded etcd")
	}
	bin := buildFlowgate(t)
	inst := startEtcdInstallation(t)
	dir, _, logf := e2eDirs(t)
	g := startGateway(t, bin, dir, logf, "--store", inst.url)
	t.Cleanup(g.reap)
	env := append(os.Environ(), "FLOWGATE_HOME="+dir)

	var status struct {
		Backend string
		Members []struct {
			ID  string
			PID int
		}
	}
	require.NoError(t, json.Unmarshal([]byte(flowgateEnv(t, env, bin, "cluster", "status", "--json")), &status))
	require.Equal(t, "etcd", status.Backend, "cluster status reads the store the home's gateway serves")
	require.Len(t, status.Members, 1)
	require.Equal(t, g.cmd.Process.Pid, status.Members[0].PID)

	flowgateEnv(t, env, bin, "tasks", "run", "--label", "on-etcd", "--", "true")
	list := func() []*stored.Task {
		var out struct{ Tasks []*stored.Task }
		require.NoError(t, json.Unmarshal([]byte(flowgateEnv(t, env, bin, "tasks", "list", "--json")), &out))
		return out.Tasks
	}
	require.Len(t, list(), 1, "through the gateway")
	page, err := inst.eng.ListTasks(engine.TaskFilter{})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 1, "the task is in etcd")

	g.stop(t)
	tasks := list()
	require.Len(t, tasks, 1, "with no gateway running, tasks list opens the store the home's gateway served")
	require.Equal(t, "on-etcd", tasks[0].Label)
	require.NoError(t, json.Unmarshal([]byte(flowgateEnv(t, env, bin, "cluster", "status", "--json")), &status))
	require.Equal(t, "etcd", status.Backend)

	// A command that works on the home's bbolt file says where the
	// records are instead of copying an empty file.
	backup := exec.Command(bin, "backup", filepath.Join(t.TempDir(), "copy.db"))
	backup.Env = env
	out, err := backup.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "backup on a home whose gateway serves etcd: %s", out)
	require.Equal(t, 2, exit.ExitCode(), "%s", out)
	require.Contains(t, string(out), inst.url)
}
