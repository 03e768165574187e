package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
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
	eng, commits := countingEngine(t)
	f := createFlow(t, eng)

	step := "fan"
	before := commits.Load()
	res, err := eng.Advance(f.ID, f.Revision, sdk.FlowUpdate{CurrentStep: &step, State: json.RawMessage(`{"at":"fan"}`)}, advanceTasks(f, "a", "b", "c"), 0)
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
	_, err = eng.Advance(f.ID, f.Revision, sdk.FlowUpdate{CurrentStep: &step, State: json.RawMessage(`{"x":1}`)}, in, 0)
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "already belongs to task")

	got, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, f.Revision, got.Revision, "the flow is not written")
	require.Empty(t, got.CurrentStep)
	tasks, err := eng.FlowTasks(f.ID)
	require.NoError(t, err)
	require.Empty(t, tasks, "the first task is not created")

	_, err = eng.Advance(f.ID, f.Revision, sdk.FlowUpdate{}, advanceTasks(other, "elsewhere"), 0)
	require.ErrorIs(t, err, sdk.ErrInvalid, "a task of another flow")
}

// An Advance that names the event in delivery removes it in its own
// commit, and says so (EventAcked), so the event costs no commit of its
// own; the delivery's acknowledgement after it writes nothing.
func TestAdvanceAcknowledgesItsEventInTheSameCommit(t *testing.T) {
	t.Parallel()
	eng, commits := countingEngine(t)
	var acked []engine.Change
	eng.Listen("acks", engine.ListenerFunc(func(c engine.Change) {
		if c.Kind == engine.EventAcked {
			acked = append(acked, c)
		}
	}))
	f := createFlow(t, eng)
	evs, err := eng.Events(f.ID)
	require.NoError(t, err)
	require.Len(t, evs, 1, "flow.started")

	before := commits.Load()
	_, err = eng.Advance(f.ID, f.Revision, sdk.FlowUpdate{}, advanceTasks(f, "a"), evs[0].Seq)
	require.NoError(t, err)
	require.Equal(t, int64(1), commits.Load()-before, "commits of an Advance that acknowledges its event")
	left, err := eng.Events(f.ID)
	require.NoError(t, err)
	require.Empty(t, left, "the event is gone with the write")
	require.Equal(t, []engine.Change{{Kind: engine.EventAcked, FlowID: f.ID, Seq: evs[0].Seq}}, acked)
	due, err := eng.NextDeliveries(0, nil)
	require.NoError(t, err)
	require.Empty(t, due, "nothing left to deliver")
}

// Only the event in delivery (the head of the outbox, not parked) is
// acknowledged by an Advance; another number changes nothing but the
// Advance, and a refused Advance keeps its event for delivery again.
func TestAdvanceAcknowledgesOnlyTheEventInDelivery(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	f, err := eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{})
	require.NoError(t, err)
	f, err = eng.Resume(f.ID, f.Revision, engine.ResumeInput{Status: sdk.FlowRunning})
	require.NoError(t, err)
	step := "s"
	seqs := func() []int64 {
		evs, err := eng.Events(f.ID)
		require.NoError(t, err)
		var out []int64
		for _, ev := range evs {
			out = append(out, ev.Seq)
		}
		return out
	}
	require.Equal(t, []int64{1, 2}, seqs(), "flow.started, flow.resumed")

	res, err := eng.Advance(f.ID, f.Revision, sdk.FlowUpdate{}, advanceTasks(f, "a"), 2)
	require.NoError(t, err, "an event behind the head")
	require.Equal(t, []int64{1, 2}, seqs(), "an event behind the head stays")

	_, err = eng.Advance(f.ID, f.Revision-1, sdk.FlowUpdate{}, advanceTasks(f, "b"), 1)
	require.ErrorIs(t, err, sdk.ErrRevisionConflict)
	require.Equal(t, []int64{1, 2}, seqs(), "a refused Advance acknowledges nothing")

	_, err = eng.EventFailed(f.ID, 1, engine.EventFailure{Error: "boom", Counted: true, Park: true, Summary: "parked"})
	require.NoError(t, err)
	f, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowBlocked, f.Status)
	f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{CurrentStep: &step})
	require.NoError(t, err)
	_, err = eng.Advance(f.ID, f.Revision, sdk.FlowUpdate{}, advanceTasks(f, "p"), 1)
	require.NoError(t, err, "a blocked flow takes tasks")
	require.Equal(t, []int64{1, 2}, seqs(), "a parked head stays parked")
	f, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	f, err = eng.Resume(f.ID, f.Revision, engine.ResumeInput{Status: sdk.FlowRunning})
	require.NoError(t, err, "unblocking delivers the parked head again")
	res, err = eng.Advance(f.ID, f.Revision, sdk.FlowUpdate{}, advanceTasks(f, "c"), 1)
	require.NoError(t, err)
	require.Len(t, res.Tasks, 1)
	require.Equal(t, []int64{2, 3}, seqs(), "the head, in delivery again, goes with the Advance")
}
