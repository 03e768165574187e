package engine_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newClockEngine(t *testing.T) (*engine.Engine, store.Store, *clock) {
	t.Helper()
	st := openStore(t)
	c := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	eng, err := engine.New(st, engine.Config{Now: c.now})
	require.NoError(t, err)
	return eng, st, c
}

func finish(t *testing.T, eng *engine.Engine, id string, s sdk.TaskStatus) {
	t.Helper()
	_, err := eng.StartTask(id, engine.StartInput{})
	require.NoError(t, err)
	_, err = eng.FinishTask(id, engine.FinishInput{Status: s})
	require.NoError(t, err)
}

func keysUnder(t *testing.T, st store.Store, prefix string) []string {
	t.Helper()
	var keys []string
	require.NoError(t, st.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan(prefix, store.ScanOptions{}, func(it store.Item) bool {
			keys = append(keys, it.Key)
			return true
		})
	}))
	return keys
}

func TestPruneFlowTakesItsTasksEventsAndIndexes(t *testing.T) {
	eng, st, c := newClockEngine(t)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)
	a, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, OwnerKey: "o", Runtime: "cli", IdempotencyKey: "a"})
	require.NoError(t, err)
	finish(t, eng, a.ID, sdk.TaskSucceeded)
	f, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	_, err = eng.Finish(f.ID, f.Revision, engine.EndInput{})
	require.NoError(t, err)
	keep, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Runtime: "cli"}) // another flow, untouched
	require.NoError(t, err)

	// A stray task entry under the flow, its task gone: it must not
	// outlive the flow.
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error { _, err := tx.Put("idx/task/flow/"+f.ID+"/ghost", nil); return err }))

	_, err = eng.PruneFlow(f.ID, c.t.Add(-time.Hour))
	require.ErrorIs(t, err, sdk.ErrInvalid, "inside the retention")
	pruned, err := eng.PruneFlow(f.ID, c.t)
	require.NoError(t, err)
	require.Equal(t, []string{a.ID}, pruned)

	_, err = eng.GetFlow(f.ID)
	require.ErrorIs(t, err, sdk.ErrNotFound)
	_, err = eng.GetTask(a.ID)
	require.ErrorIs(t, err, sdk.ErrNotFound)
	_, err = eng.ResolveTask("a")
	require.ErrorIs(t, err, sdk.ErrNotFound, "the idempotency key is free again")
	require.Empty(t, keysUnder(t, st, "event/"+f.ID+"/"))
	require.Empty(t, keysUnder(t, st, "eventseq/"+f.ID))
	require.Empty(t, keysUnder(t, st, "idx/task/flow/"+f.ID+"/"))
	problems, err := eng.CheckIndexes()
	require.NoError(t, err)
	require.Empty(t, problems)
	_, err = eng.GetTask(keep.ID)
	require.NoError(t, err)
}

func TestPruneFlowRefusesWhatCanStillMove(t *testing.T) {
	eng, _, c := newClockEngine(t)
	waiting, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "gate"})
	require.NoError(t, err)
	_, err = eng.SetWaiting(waiting.ID, waiting.Revision, engine.WaitInput{CurrentStep: "approve"})
	require.NoError(t, err)
	blocked, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "blocked"})
	require.NoError(t, err)
	_, err = eng.UpdateFlow(blocked.ID, blocked.Revision, engine.FlowPatch{Status: sdk.FlowBlocked})
	require.NoError(t, err)
	active, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Runtime: "cli"})
	require.NoError(t, err)

	later := c.t.Add(30 * 24 * time.Hour)
	for _, id := range []string{waiting.ID, blocked.ID, active.FlowID} {
		_, err := eng.PruneFlow(id, later)
		require.ErrorIs(t, err, sdk.ErrInvalid, id)
		_, err = eng.GetFlow(id)
		require.NoError(t, err)
	}
}

func TestPruneDanglingTaskAfterCleanup(t *testing.T) {
	eng, st, c := newClockEngine(t)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Runtime: "cli"})
	require.NoError(t, err)
	finish(t, eng, task.ID, sdk.TaskFailed)
	require.ErrorIs(t, eng.PruneTask(task.ID, c.t.Add(30*24*time.Hour)), sdk.ErrInvalid, "a task with its flow goes with the flow")
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error { return tx.Delete("flow/" + task.FlowID) }))
	require.ErrorIs(t, eng.PruneTask(task.ID, c.t), sdk.ErrInvalid, "kept until cleanup_after")
	require.NoError(t, eng.PruneTask(task.ID, c.t.Add(8*24*time.Hour)))
	_, err = eng.GetTask(task.ID)
	require.ErrorIs(t, err, sdk.ErrNotFound)
}

func TestStampCleanupFinalizeCancelRepairMirror(t *testing.T) {
	eng, st, _ := newClockEngine(t)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Runtime: "cli"})
	require.NoError(t, err)
	finish(t, eng, task.ID, sdk.TaskSucceeded)
	task, err = eng.GetTask(task.ID)
	require.NoError(t, err)

	// Damage from outside: the cleanup stamp is gone and the mirror is
	// out of step.
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		tk, f := *task, sdk.Flow{}
		tk.CleanupAfter = time.Time{}
		if err := putRecord(tx, "task/"+tk.ID, tk); err != nil {
			return err
		}
		if err := getRecord(tx, "flow/"+task.FlowID, &f); err != nil {
			return err
		}
		f.Status = sdk.FlowRunning
		return putRecord(tx, "flow/"+f.ID, f)
	}))
	stamped, err := eng.StampCleanup(task.ID)
	require.NoError(t, err)
	require.Equal(t, task.EndedAt.Add(7*24*time.Hour), stamped.CleanupAfter)
	_, err = eng.StampCleanup(task.ID)
	require.ErrorIs(t, err, sdk.ErrInvalid, "once stamped, nothing to do")

	f, err := eng.GetFlow(task.FlowID)
	require.NoError(t, err)
	require.True(t, engine.MirrorMismatch(f, stamped))
	f, err = eng.RepairMirror(f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowSucceeded, f.Status)
	require.False(t, engine.MirrorMismatch(f, stamped))

	// A cancel that missed its finish.
	m, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)
	_, err = eng.FinalizeCancel(m.ID)
	require.ErrorIs(t, err, sdk.ErrInvalid, "no cancel requested")
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		var f sdk.Flow
		if err := getRecord(tx, "flow/"+m.ID, &f); err != nil {
			return err
		}
		f.CancelRequestedAt = f.CreatedAt
		return putRecord(tx, "flow/"+m.ID, f)
	}))
	m, err = eng.FinalizeCancel(m.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowCancelled, m.Status)
}

// putRecord and getRecord write and read raw records under the engine, to
// inject damage it would never write itself.
func putRecord(tx store.Tx, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = tx.Put(key, b)
	return err
}

func getRecord(tx store.ReadTx, key string, v any) error {
	it, err := tx.Get(key)
	if err != nil {
		return err
	}
	return json.Unmarshal(it.Value, v)
}

func TestFlowsEndedBefore(t *testing.T) {
	eng, _, c := newClockEngine(t)
	var ended []string
	for i := range 3 {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Runtime: "cli"})
		require.NoError(t, err)
		_, err = eng.CancelTask(task.ID)
		require.NoError(t, err)
		ended = append(ended, task.FlowID)
		c.t = c.t.Add(time.Duration(i+1) * time.Hour)
	}
	_, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Runtime: "cli"}) // not ended
	require.NoError(t, err)
	ids, err := eng.FlowsEndedBefore(c.t, 0)
	require.NoError(t, err)
	require.Equal(t, ended, ids, "oldest first")
	ids, err = eng.FlowsEndedBefore(time.Date(2026, 5, 1, 12, 30, 0, 0, time.UTC), 0)
	require.NoError(t, err)
	require.Equal(t, ended[:1], ids)
	ids, err = eng.FlowsEndedBefore(c.t, 2)
	require.NoError(t, err)
	require.Equal(t, ended[:2], ids)
}

// A flow with a long history (300 entries, some 600 keys) is pruned in
// one change on either backend: on etcd its history goes as one range
// deletion, within etcd's 128 operations per transaction.
func TestPruneFlowWithALongHistory(t *testing.T) {
	t.Parallel()
	eng, st, c := newClockEngine(t)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)
	for i := range 300 {
		step := fmt.Sprintf("step %d", i)
		f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{CurrentStep: &step})
		require.NoError(t, err)
	}
	_, err = eng.Finish(f.ID, f.Revision, engine.EndInput{})
	require.NoError(t, err)
	require.Greater(t, len(keysUnder(t, st, "history/")), 300)

	_, err = eng.PruneFlow(f.ID, c.t)
	require.NoError(t, err)
	require.Empty(t, keysUnder(t, st, "history/"))
	_, err = eng.GetFlow(f.ID)
	require.ErrorIs(t, err, sdk.ErrNotFound)
}

// TestPruneFlowInSteps: a flow of 200 tasks needs more operations than
// etcd takes in one transaction (128), so it is pruned in steps. A prune
// stopped after a step, as by a crash, leaves the flow with fewer tasks
// and every index in step, and the next prune finishes it. Before, etcd
// refused to prune a flow of more than about 25 tasks.
func TestPruneFlowInSteps(t *testing.T) {
	t.Parallel()
	eng, st, c := newClockEngine(t)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)
	const n = 200
	all := map[string]bool{}
	for i := range n {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, OwnerKey: "o", Runtime: "cli", IdempotencyKey: fmt.Sprintf("step-%d", i)})
		require.NoError(t, err)
		finish(t, eng, task.ID, sdk.TaskSucceeded)
		all[task.ID] = true
	}
	f, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	_, err = eng.Finish(f.ID, f.Revision, engine.EndInput{})
	require.NoError(t, err)

	first, err := eng.PruneFlowStep(f.ID, c.t, 16)
	require.NoError(t, err)
	require.Len(t, first, 16)
	problems, err := eng.CheckIndexes()
	require.NoError(t, err)
	require.Empty(t, problems, "a prune stopped between steps left the indexes out of step")
	_, err = eng.GetFlow(f.ID)
	require.NoError(t, err, "a step prunes the flow")
	require.Len(t, keysUnder(t, st, "idx/task/flow/"+f.ID+"/"), n-16)

	rest, err := eng.PruneFlow(f.ID, c.t)
	require.NoError(t, err)
	require.Len(t, rest, n-16)
	for _, id := range append(first, rest...) {
		require.True(t, all[id], id)
		delete(all, id)
	}
	require.Empty(t, all, "tasks left unpruned")
	_, err = eng.GetFlow(f.ID)
	require.ErrorIs(t, err, sdk.ErrNotFound)
	_, err = eng.ResolveTask("step-7")
	require.ErrorIs(t, err, sdk.ErrNotFound)
	require.Empty(t, keysUnder(t, st, "idx/task/"))
	require.Empty(t, keysUnder(t, st, "task/"))
	problems, err = eng.CheckIndexes()
	require.NoError(t, err)
	require.Empty(t, problems)
}
