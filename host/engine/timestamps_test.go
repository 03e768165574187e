package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// TestRepairTimestampsRules: each rule moves a timestamp to one the record
// holds, so the repaired record has nothing left to repair.
func TestRepairTimestampsRules(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		in   stored.Task
		want stored.Task
	}{
		"running with ended_at": {
			stored.Task{Task: sdk.Task{Status: sdk.TaskRunning, CreatedAt: t0, StartedAt: t0, UpdatedAt: t0, EndedAt: t0}},
			stored.Task{Task: sdk.Task{Status: sdk.TaskRunning, CreatedAt: t0, StartedAt: t0, UpdatedAt: t0}},
		},
		"started before created": {
			stored.Task{Task: sdk.Task{Status: sdk.TaskSucceeded, CreatedAt: t0, StartedAt: t0.Add(-time.Minute), UpdatedAt: t0.Add(time.Hour), EndedAt: t0.Add(time.Hour)}},
			stored.Task{Task: sdk.Task{Status: sdk.TaskSucceeded, CreatedAt: t0.Add(-time.Minute), StartedAt: t0.Add(-time.Minute), UpdatedAt: t0.Add(time.Hour), EndedAt: t0.Add(time.Hour)}},
		},
		"ended before started: its last write": {
			stored.Task{Task: sdk.Task{Status: sdk.TaskFailed, CreatedAt: t0, StartedAt: t0.Add(time.Minute), UpdatedAt: t0.Add(time.Hour), EndedAt: t0}},
			stored.Task{Task: sdk.Task{Status: sdk.TaskFailed, CreatedAt: t0, StartedAt: t0.Add(time.Minute), UpdatedAt: t0.Add(time.Hour), EndedAt: t0.Add(time.Hour)}},
		},
		"ended before started, written before too: its start": {
			stored.Task{Task: sdk.Task{Status: sdk.TaskFailed, CreatedAt: t0, StartedAt: t0.Add(time.Minute), UpdatedAt: t0, EndedAt: t0}},
			stored.Task{Task: sdk.Task{Status: sdk.TaskFailed, CreatedAt: t0, StartedAt: t0.Add(time.Minute), UpdatedAt: t0, EndedAt: t0.Add(time.Minute)}},
		},
	} {
		got, changes := engine.RepairedTaskTimes(&tc.in)
		require.NotEmpty(t, changes, name)
		require.Equal(t, tc.want, got, name)
		_, again := engine.RepairedTaskTimes(&got)
		require.Empty(t, again, name)
	}
	f := sdk.Flow{CreatedAt: t0, UpdatedAt: t0.Add(2 * time.Hour), EndedAt: t0.Add(-time.Hour)}
	got, changes := engine.RepairedFlowTimes(&f)
	require.Len(t, changes, 2)
	require.Equal(t, sdk.Flow{CreatedAt: t0.Add(-time.Hour), UpdatedAt: t0.Add(-time.Hour), EndedAt: t0.Add(-time.Hour)}, got, "the end stays; created and updated come back to it")
}

// TestRepairTimestampsGuards: a repair from a stale read is refused, one
// with nothing to repair too, and neither writes.
func TestRepairTimestampsGuards(t *testing.T) {
	eng, st, c := newClockEngine(t)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Runtime: "cli"})
	require.NoError(t, err)
	finish(t, eng, task.ID, sdk.TaskSucceeded)
	c.t = c.t.Add(time.Minute)

	fresh, err := eng.GetTask(task.ID)
	require.NoError(t, err)
	_, err = eng.RepairTaskTimestamps(task.ID, fresh.UpdatedAt)
	require.ErrorIs(t, err, sdk.ErrInvalid, "nothing to repair")
	f, err := eng.GetFlow(task.FlowID)
	require.NoError(t, err)
	_, err = eng.RepairFlowTimestamps(f.ID, f.Revision)
	require.ErrorIs(t, err, sdk.ErrInvalid, "nothing to repair")

	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		var v sdk.Flow
		if err := getRecord(tx, "flow/"+f.ID, &v); err != nil {
			return err
		}
		v.UpdatedAt = v.EndedAt.Add(time.Hour)
		return putRecord(tx, "flow/"+f.ID, v)
	}))
	bad, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	_, err = eng.RepairFlowTimestamps(f.ID, bad.Revision-1)
	var rc *sdk.RevisionConflictError
	require.ErrorAs(t, err, &rc, "a stale revision")
	_, err = eng.RepairTaskTimestamps(task.ID, fresh.UpdatedAt.Add(-time.Second))
	require.ErrorIs(t, err, sdk.ErrRevisionConflict, "a task written since it was read")
	after, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, bad, after, "refusals write nothing")

	repaired, err := eng.RepairFlowTimestamps(f.ID, bad.Revision)
	require.NoError(t, err)
	require.Equal(t, bad.Revision+1, repaired.Revision)
	require.Equal(t, bad.EndedAt, repaired.UpdatedAt, "an ended flow's updated_at comes back to its end, not now")
	require.Equal(t, bad.EndedAt, repaired.EndedAt)
}
