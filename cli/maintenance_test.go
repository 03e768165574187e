package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/storetest"
	"github.com/flowgate/flowgate/sdk"
)

// Without a gateway: damage a stopped store, preview (nothing written),
// apply (repaired), and check agrees.
func TestTasksMaintenanceRepairsIndexesWithoutGateway(t *testing.T) {
	dir := shortHome(t)
	seed(t, dir, func(eng *engine.Engine) {
		_, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Runtime: "cli"})
		require.NoError(t, err)
	})
	st, err := store.Open(filepath.Join(dir, home.DBFile), store.Options{})
	require.NoError(t, err)
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error { _, err := tx.Put("idx/flow/owner/o/ghost", nil); return err }))
	require.NoError(t, st.Close())

	code, out, errOut := run(t, dir, "tasks", "maintenance")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Tasks maintenance (preview): tasks 0 reconcile · 0 cleanup stamp · 0 prune; task-flows 0 reconcile · 0 prune")
	require.Contains(t, out, "Tasks health: 1 queued · 0 running · 1 audit errors · 0 audit warnings")
	require.Contains(t, out, "Index entries out of step with their records: 1 (to repair)")
	require.Contains(t, out, "Dry run only. Re-run with `flowgate tasks maintenance --apply` to write changes.")
	code, _, _ = run(t, dir, "check")
	require.NotEqual(t, 0, code, "a preview repairs nothing")

	code, out, errOut = run(t, dir, "tasks", "maintenance", "--apply")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "Tasks maintenance (applied):")
	require.Contains(t, out, "Tasks health after apply: 1 queued · 0 running · 0 audit errors · 0 audit warnings")
	require.Contains(t, out, "Tasks health before apply: 1 queued · 0 running · 1 audit errors · 0 audit warnings")
	require.Contains(t, out, "(repaired)")
	require.NotContains(t, out, "Dry run only")
	code, out, errOut = run(t, dir, "check")
	require.Equal(t, 0, code, out+errOut)
}

// Through a gateway with a short flow retention: a finished flow is
// pruned with its task and logs, and the JSON has the documented shape.
func TestTasksMaintenanceThroughGatewayPrunesWithConfiguredRetention(t *testing.T) {
	dir := shortHome(t)
	var fc gateway.FileConfig
	fc.Retention.Flows = gateway.Duration(time.Millisecond)
	fc.Maintenance.Disabled = true // this test drives the pass itself
	g := serveGateway(t, gateway.Config{Home: dir, Owner: "cli test gateway", File: fc})

	code, out, errOut := run(t, dir, "tasks", "run", "--label", "short", "--", "true")
	require.Equal(t, 0, code, out+errOut)
	c := g.Client()
	page, err := c.ListTasks(context.Background(), apitype.TaskFilter{})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 1)
	task := page.Tasks[0]
	require.Equal(t, sdk.TaskSucceeded, task.Status)
	require.DirExists(t, filepath.Join(dir, "logs", task.ID))
	require.Eventually(t, func() bool { return time.Since(task.EndedAt) > 10*time.Millisecond }, 5*time.Second, time.Millisecond)

	code, out, errOut = run(t, dir, "tasks", "maintenance", "--json")
	require.Equal(t, 0, code, errOut)
	var rep api.MaintenanceReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, "preview", rep.Mode)
	require.Equal(t, 1, rep.Maintenance.TaskFlows.Pruned)
	var shape map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &shape))
	for _, k := range []string{"mode", "maintenance", "tasks", "audit_before", "audit_after"} {
		require.Contains(t, shape, k)
	}
	require.Contains(t, shape["maintenance"], "task_flows")

	code, out, errOut = run(t, dir, "tasks", "maintenance", "--apply", "--json")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, 1, rep.Maintenance.TaskFlows.Pruned)
	require.Equal(t, 1, rep.Maintenance.LogsRemoved)
	_, err = c.ResolveTask(context.Background(), task.ID)
	require.ErrorIs(t, err, sdk.ErrNotFound)
	require.NoDirExists(t, filepath.Join(dir, "logs", task.ID))
}

// The gateway's sweep prunes on its own, soon after start and then every
// interval.
func TestGatewaySweepPrunesExpiredFlows(t *testing.T) {
	dir := shortHome(t)
	var fc gateway.FileConfig
	fc.Retention.Flows = gateway.Duration(time.Millisecond)
	fc.Maintenance.First = gateway.Duration(300 * time.Millisecond)
	fc.Maintenance.Interval = gateway.Duration(time.Second)
	// The task runs before the gateway starts (tasks run hosts its own),
	// so the sweep cannot prune its flow while tasks run still reads it.
	code, out, errOut := run(t, dir, "tasks", "run", "--", "true")
	require.Equal(t, 0, code, out+errOut)

	g := serveGateway(t, gateway.Config{Home: dir, Owner: "cli test gateway", File: fc})
	require.Eventually(t, func() bool {
		page, err := g.Client().ListTasks(context.Background(), apitype.TaskFilter{})
		return err == nil && len(page.Tasks) == 0
	}, 10*time.Second, 20*time.Millisecond, "the sweep prunes the finished task's flow and the task")
}

// bloatHome leaves the home's store file mostly free pages
// (storetest.FillAndFree) and returns its size.
func bloatHome(t *testing.T, dir string) int64 {
	t.Helper()
	path := filepath.Join(dir, home.DBFile)
	st, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	storetest.FillAndFree(t, st, "junk/", 20_000)
	require.NoError(t, st.Close())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}

func TestTasksMaintenanceCompacts(t *testing.T) {
	t.Run("without gateway: at once", func(t *testing.T) {
		dir := shortHome(t)
		size := bloatHome(t, dir)
		code, out, errOut := run(t, dir, "tasks", "maintenance")
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "free pages; --apply compacts it")
		code, out, errOut = run(t, dir, "tasks", "maintenance", "--apply")
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "Compacted the store file: ")
		fi, err := os.Stat(filepath.Join(dir, home.DBFile))
		require.NoError(t, err)
		require.Less(t, fi.Size(), size/2)
	})
	t.Run("with gateway: at its next start", func(t *testing.T) {
		dir := shortHome(t)
		size := bloatHome(t, dir)
		g, err := gateway.New(gateway.Config{Home: dir, Owner: "cli test gateway"})
		require.NoError(t, err)
		require.NoError(t, g.Start(context.Background()))
		code, out, errOut := run(t, dir, "tasks", "maintenance", "--apply")
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "the gateway compacts it at its next start")
		require.NoError(t, g.Stop(context.Background()))
		require.NoError(t, g.Start(context.Background()))
		t.Cleanup(func() { require.NoError(t, g.Stop(context.Background())) })
		fi, err := os.Stat(filepath.Join(dir, home.DBFile))
		require.NoError(t, err)
		require.Less(t, fi.Size(), size/2)
		code, _, errOut = run(t, dir, "check")
		require.Equal(t, 0, code, errOut)
	})
}
