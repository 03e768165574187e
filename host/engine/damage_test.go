package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/storetest"
	"github.com/flowgate/flowgate/sdk"
)

// requireDamaged asserts err is a *engine.DamagedRecord for key whose
// reason contains why.
func requireDamaged(t *testing.T, err error, key, why string) {
	t.Helper()
	var d *engine.DamagedRecord
	require.True(t, errors.As(err, &d), "want a damaged record, got %v", err)
	require.Equal(t, key, d.Key)
	require.Contains(t, d.Reason, why)
}

func storeKeys(t *testing.T, st store.Store, prefix string) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	require.NoError(t, st.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan(prefix, store.ScanOptions{}, func(it store.Item) bool {
			keys[it.Key] = true
			return true
		})
	}))
	return keys
}

// A record the engine could not have written (a flow with status "done",
// a task with an unknown status, a flow without an id) or one that does
// not decode is damaged: reads refuse it, lists skip and report it, the
// index check reports it, and repair never indexes it.
func TestInvalidRecordsAreDamagedAndNeverIndexed(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	done := createFlow(t, eng)
	noID := createFlow(t, eng)
	healthy := createFlow(t, eng)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: healthy.ID, OwnerKey: healthy.OwnerKey, Runtime: "cli"})
	require.NoError(t, err)
	storetest.EditRecord(t, st, "flow/"+done.ID, map[string]any{"status": "done"})
	storetest.EditRecord(t, st, "flow/"+noID.ID, map[string]any{"id": nil})
	storetest.EditRecord(t, st, "task/"+task.ID, map[string]any{"status": "exploded"})
	storetest.PutRaw(t, st, "flow/zz-garbled", []byte("{not json"))

	_, err = eng.GetFlow(done.ID)
	requireDamaged(t, err, "flow/"+done.ID, `status "done" is not a flow status`)
	_, err = eng.GetTask(task.ID)
	requireDamaged(t, err, "task/"+task.ID, `status "exploded" is not a task status`)

	page, err := eng.ListFlows(engine.FlowFilter{})
	require.NoError(t, err, "one damaged record never fails a list")
	require.Len(t, page.Flows, 1)
	require.Equal(t, healthy.ID, page.Flows[0].ID)
	var skipped []string
	for _, d := range page.Damaged {
		skipped = append(skipped, d.Key)
	}
	require.ElementsMatch(t, []string{"flow/" + done.ID, "flow/" + noID.ID, "flow/zz-garbled"}, skipped)
	views, err := eng.ViewFlows(engine.FlowFilter{})
	require.NoError(t, err)
	require.Len(t, views.Flows, 1)
	require.Len(t, views.Damaged, 4, "the three flows and the healthy flow's damaged task: %+v", views.Damaged)
	tasks, err := eng.ListTasks(engine.TaskFilter{Status: sdk.TaskQueued})
	require.NoError(t, err, "through an index too")
	require.Empty(t, tasks.Tasks)
	require.Equal(t, []engine.DamagedRecord{{Key: "task/" + task.ID, Reason: tasks.Damaged[0].Reason}}, tasks.Damaged)

	problems, err := eng.CheckIndexes()
	require.NoError(t, err)
	damaged := map[string]bool{}
	for _, p := range problems {
		if p.Kind == engine.RecordDamaged {
			damaged[p.Record] = true
		}
	}
	require.Equal(t, map[string]bool{"flow/" + done.ID: true, "flow/" + noID.ID: true, "flow/zz-garbled": true, "task/" + task.ID: true}, damaged)

	_, err = eng.RepairIndexes()
	require.NoError(t, err)
	require.Empty(t, storeKeys(t, st, "idx/flow/status/done/"), "a damaged record is never indexed")
	require.Empty(t, storeKeys(t, st, "idx/task/status/exploded/"))
	for k := range storeKeys(t, st, "idx/") {
		for rec := range damaged {
			_, id, _ := strings.Cut(rec, "/")
			require.False(t, strings.HasSuffix(k, "/"+id), "entry %s names damaged %s", k, rec)
		}
	}
}

// Quarantine moves a damaged record, bytes and all, out of the records;
// it refuses a healthy one.
func TestQuarantineMovesOnlyDamagedRecords(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	bad, good := createFlow(t, eng), createFlow(t, eng)
	raw := storetest.EditRecord(t, st, "flow/"+bad.ID, map[string]any{"status": "done"})
	require.NotEmpty(t, eventTypes(t, eng, bad.ID), "the flow has an outbox")
	ds, err := eng.NextDeliveries(0, nil)
	require.NoError(t, err, "a damaged flow never stops the delivery of the others")
	require.Len(t, ds, 1)
	require.Equal(t, good.ID, ds[0].Event.FlowID)

	_, err = eng.Quarantine("flow/" + good.ID)
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "is not damaged")
	_, err = eng.Quarantine("cron/x")
	require.ErrorIs(t, err, sdk.ErrInvalid)

	q, err := eng.Quarantine("flow/" + bad.ID)
	require.NoError(t, err)
	require.Equal(t, "flow/"+bad.ID, q.Key)
	require.Equal(t, 1, q.DroppedEvents, "its outbox goes with it")
	require.Empty(t, storeKeys(t, st, "event/"+bad.ID+"/"))
	_, err = eng.GetFlow(bad.ID)
	require.ErrorIs(t, err, sdk.ErrNotFound)
	_, err = eng.Quarantine("flow/" + bad.ID)
	require.ErrorIs(t, err, sdk.ErrNotFound)

	list, err := eng.ListQuarantine()
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, raw, list[0].Value, "the bytes are kept as they were")
	require.Contains(t, list[0].Reason, `status "done"`)

	_, err = eng.RepairIndexes()
	require.NoError(t, err)
	problems, err := eng.CheckIndexes()
	require.NoError(t, err)
	require.Empty(t, problems, "the quarantined record's entries went with the repair")
}
