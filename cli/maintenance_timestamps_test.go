package cli_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// rewriteStamps edits the timestamps of the record at key in home's store
// behind the engine's back, as a jumped clock or an old bug would have
// written them, then puts the indexes back in step.
func rewriteStamps(t *testing.T, dir, key string, fn func(m map[string]time.Time)) {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, home.DBFile), store.Options{})
	require.NoError(t, err)
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		it, err := tx.Get(key)
		if err != nil {
			return err
		}
		var rec map[string]any
		require.NoError(t, json.Unmarshal(it.Value, &rec))
		stamps := map[string]time.Time{}
		for _, k := range []string{"created_at", "started_at", "updated_at", "ended_at"} {
			if s, ok := rec[k].(string); ok {
				stamps[k], err = time.Parse(time.RFC3339Nano, s)
				require.NoError(t, err)
			}
		}
		fn(stamps)
		for k, v := range stamps {
			rec[k] = v
		}
		b, _ := json.Marshal(rec)
		_, err = tx.Put(key, b)
		return err
	}))
	require.NoError(t, st.Close())
	seed(t, dir, func(eng *engine.Engine) { _, err := eng.RepairIndexes(); require.NoError(t, err) })
}

// auditCodes returns how many findings of each code tasks audit reports.
func auditCodes(t *testing.T, dir string) map[string]int {
	t.Helper()
	code, out, errOut := run(t, dir, "tasks", "audit", "--json")
	require.Equal(t, 0, code, errOut)
	var rep struct{ Findings []struct{ Code string } }
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	codes := map[string]int{}
	for _, f := range rep.Findings {
		codes[f.Code]++
	}
	return codes
}

// maintain runs tasks maintenance --json and returns the timestamp
// repairs it counted for tasks and for flows.
func maintain(t *testing.T, dir string, flags ...string) (tasks, flows int) {
	t.Helper()
	code, out, errOut := run(t, dir, append([]string{"tasks", "maintenance", "--json"}, flags...)...)
	require.Equal(t, 0, code, out+errOut)
	var rep struct {
		Maintenance struct {
			Tasks struct {
				TimestampsRepaired int `json:"timestamps_repaired"`
			}
			TaskFlows struct {
				TimestampsRepaired int `json:"timestamps_repaired"`
			} `json:"task_flows"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	return rep.Maintenance.Tasks.TimestampsRepaired, rep.Maintenance.TaskFlows.TimestampsRepaired
}

// TestMaintenanceRepairsInconsistentTimestamps: records whose timestamps
// the audit flags (a task that ended before it started, one that started
// before it was created, a flow changed after it ended) are counted by a
// preview, repaired by --apply with an entry in the flow's history, leave
// the audit clean, and a second --apply changes nothing.
func TestMaintenanceRepairsInconsistentTimestamps(t *testing.T) {
	t.Parallel()
	dir := shortHome(t)
	var tasks [3]apitype.Task
	for i := range tasks {
		code, out, errOut := run(t, dir, "tasks", "run", "--detach", "--json", "--", "true")
		require.Equal(t, 0, code, errOut)
		require.NoError(t, json.Unmarshal([]byte(out), &tasks[i]), out)
		tasks[i] = endedTask(t, dir, tasks[i].ID)
		require.Equal(t, sdk.TaskSucceeded, tasks[i].Status)
	}
	rewriteStamps(t, dir, "task/"+tasks[0].ID, func(m map[string]time.Time) { m["ended_at"] = m["started_at"].Add(-time.Hour) })
	rewriteStamps(t, dir, "task/"+tasks[1].ID, func(m map[string]time.Time) { m["started_at"] = m["created_at"].Add(-time.Minute) })
	rewriteStamps(t, dir, "flow/"+tasks[2].FlowID, func(m map[string]time.Time) { m["updated_at"] = m["ended_at"].Add(time.Hour) })
	require.Equal(t, 3, auditCodes(t, dir)["inconsistent_timestamps"])

	nt, nf := maintain(t, dir)
	require.Equal(t, [2]int{2, 1}, [2]int{nt, nf}, "the preview counts them")
	require.Equal(t, 3, auditCodes(t, dir)["inconsistent_timestamps"], "and changes nothing")
	code, out, _ := run(t, dir, "tasks", "maintenance")
	require.Equal(t, 0, code)
	require.Contains(t, out, "Inconsistent timestamps: 2 tasks · 1 task-flows (to repair)")

	nt, nf = maintain(t, dir, "--apply")
	require.Equal(t, [2]int{2, 1}, [2]int{nt, nf})
	codes := auditCodes(t, dir)
	require.Zero(t, codes["inconsistent_timestamps"], "%v", codes)
	require.Zero(t, codes["mirror_mismatch"], "the mirrored flow follows its task's repaired end: %v", codes)

	code, out, errOut := run(t, dir, "tasks", "show", "--json", tasks[0].ID)
	require.Equal(t, 0, code, errOut)
	var repaired apitype.Task
	require.NoError(t, json.Unmarshal([]byte(out), &repaired))
	require.False(t, repaired.EndedAt.Before(repaired.StartedAt), "ended %s, started %s", repaired.EndedAt, repaired.StartedAt)
	code, out, errOut = run(t, dir, "tasks", "flow", "history", tasks[0].FlowID)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "timestamps repaired: ended_at ")

	revision := func(id string) int64 {
		code, out, errOut := run(t, dir, "tasks", "flow", "show", "--json", id)
		require.Equal(t, 0, code, errOut)
		var f struct{ Revision int64 }
		require.NoError(t, json.Unmarshal([]byte(out), &f), out)
		return f.Revision
	}
	before := [3]int64{revision(tasks[0].FlowID), revision(tasks[1].FlowID), revision(tasks[2].FlowID)}
	require.NotZero(t, before[2])
	nt, nf = maintain(t, dir, "--apply")
	require.Equal(t, [2]int{0, 0}, [2]int{nt, nf}, "a second apply finds nothing")
	require.Equal(t, before, [3]int64{revision(tasks[0].FlowID), revision(tasks[1].FlowID), revision(tasks[2].FlowID)}, "and writes nothing")
}
