package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

func TestCheckIndexesCleanThroughNormalWork(t *testing.T) {
	eng := newEngine(t)
	f := createFlow(t, eng)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, OwnerKey: f.OwnerKey, Runtime: "cli", IdempotencyKey: "k/1"})
	require.NoError(t, err)
	_, err = eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded})
	require.NoError(t, err)
	mirrored, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Runtime: "cli"})
	require.NoError(t, err)
	_, err = eng.CancelTask(mirrored.ID)
	require.NoError(t, err)
	_, err = eng.CancelFlow(f.ID, "")
	require.NoError(t, err)

	problems, err := eng.CheckIndexes()
	require.NoError(t, err)
	require.Empty(t, problems)
	n, err := eng.RepairIndexes()
	require.NoError(t, err)
	require.Zero(t, n, "nothing to repair")
}

// Damage injected under the engine (an orphan entry, a missing entry, an
// idempotency entry naming another task, an undecodable record) is found
// with the record it concerns, and RepairIndexes fixes all but the
// unreadable record.
func TestCheckAndRepairIndexes(t *testing.T) {
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	f := createFlow(t, eng)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, OwnerKey: f.OwnerKey, Runtime: "cli", IdempotencyKey: "idem"})
	require.NoError(t, err)

	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		if _, err := tx.Put("idx/flow/status/succeeded/"+f.ID, nil); err != nil { // wrong status
			return err
		}
		if err := tx.Delete("idx/task/owner/owner-a/" + task.ID); err != nil {
			return err
		}
		if _, err := tx.Put("idx/task/idem/idem", []byte("someone-else")); err != nil {
			return err
		}
		_, err := tx.Put("task/garbled", []byte("{not json"))
		return err
	}))

	problems, err := eng.CheckIndexes()
	require.NoError(t, err)
	byKey := map[string]engine.IndexProblem{}
	for _, p := range problems {
		byKey[p.Key] = p
	}
	require.Len(t, problems, 4, "%+v", problems)
	require.Equal(t, engine.IndexOrphan, byKey["idx/flow/status/succeeded/"+f.ID].Kind)
	require.Equal(t, "flow/"+f.ID, byKey["idx/flow/status/succeeded/"+f.ID].Record)
	require.Equal(t, engine.IndexMissing, byKey["idx/task/owner/owner-a/"+task.ID].Kind)
	require.Equal(t, "task/"+task.ID, byKey["idx/task/owner/owner-a/"+task.ID].Record)
	require.Equal(t, engine.IndexOrphan, byKey["idx/task/idem/idem"].Kind)
	require.Contains(t, byKey["idx/task/idem/idem"].Detail, "someone-else")
	require.Equal(t, engine.RecordDamaged, byKey["task/garbled"].Kind)

	n, err := eng.RepairIndexes()
	require.NoError(t, err)
	require.Equal(t, 3, n)
	problems, err = eng.CheckIndexes()
	require.NoError(t, err)
	require.Len(t, problems, 1)
	require.Equal(t, engine.RecordDamaged, problems[0].Kind)

	// The repaired indexes serve reads again.
	got, err := eng.ResolveTask("idem")
	require.NoError(t, err)
	require.Equal(t, task.ID, got.ID)
	page, err := eng.ListTasks(engine.TaskFilter{OwnerKey: "owner-a"})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 1)
}
