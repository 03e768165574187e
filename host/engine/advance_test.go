package engine_test

import (
	"encoding/json"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// advanceTasks asks for a task in flow f for each label.
func advanceTasks(f *sdk.Flow, labels ...string) []engine.CreateTaskInput {
	in := make([]engine.CreateTaskInput, len(labels))
	for i, l := range labels {
		in[i] = engine.CreateTaskInput{FlowID: f.ID, Runtime: "ctl", Label: l, IdempotencyKey: f.ID + ":" + l, Spec: sdk.TaskSpec{Shell: "echo " + l}}
	}
	return in
}

// A step's flow update and its tasks are one commit, where UpdateFlow and
// CreateTask were one each.
func TestAdvanceIsOneCommit(t *testing.T) {
	t.Parallel()
	bboltOnly(t)
	var commits atomic.Int64
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{OnCommit: func(time.Duration) { commits.Add(1) }})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	f := createFlow(t, eng)

	step := "fan"
	before := commits.Load()
	res, err := eng.Advance(f.ID, f.Revision, sdk.FlowUpdate{CurrentStep: &step, State: json.RawMessage(`{"at":"fan"}`)}, advanceTasks(f, "a", "b", "c"))
	require.NoError(t, err)
	require.Equal(t, int64(1), commits.Load()-before, "commits of one Advance with three tasks")
	require.Equal(t, f.Revision+1, res.Flow.Revision)
	require.Equal(t, []bool{true, true, true}, res.Created)

	got, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, res.Flow.Revision, got.Revision)
	require.Equal(t, "fan", got.CurrentStep)
	require.JSONEq(t, `{"at":"fan"}`, string(got.State))
	tasks, err := eng.FlowTasks(f.ID)
	require.NoError(t, err)
	require.Len(t, tasks, 3)
	for i, task := range tasks {
		require.Equal(t, res.Tasks[i].ID, task.ID)
		require.Equal(t, sdk.TaskQueued, task.Status)
	}
}

// A task refused inside the transaction, after the flow was written and
// an earlier task created, undoes both.
func TestAdvanceRefusedInsideTheWriteChangesNothing(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	other := createFlow(t, eng)
	_, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: other.ID, IdempotencyKey: "taken", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	f := createFlow(t, eng)

	step := "s"
	in := advanceTasks(f, "first")
	in = append(in, engine.CreateTaskInput{FlowID: f.ID, IdempotencyKey: "taken", Spec: sdk.TaskSpec{Shell: "true"}})
	_, err = eng.Advance(f.ID, f.Revision, sdk.FlowUpdate{CurrentStep: &step, State: json.RawMessage(`{"x":1}`)}, in)
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "already belongs to task")

	got, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, f.Revision, got.Revision, "the flow is not written")
	require.Empty(t, got.CurrentStep)
	tasks, err := eng.FlowTasks(f.ID)
	require.NoError(t, err)
	require.Empty(t, tasks, "the first task is not created")

	_, err = eng.Advance(f.ID, f.Revision, sdk.FlowUpdate{}, advanceTasks(other, "elsewhere"))
	require.ErrorIs(t, err, sdk.ErrInvalid, "a task of another flow")
}
