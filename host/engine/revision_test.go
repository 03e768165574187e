package engine_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// revisions checks that a flow's Revision is the store's revision of the
// flow's key, read straight from the store, and that each write bumped it
// by exactly one.
type revisions struct {
	t    *testing.T
	st   store.Store
	eng  *engine.Engine
	last map[string]int64
}

// newRevisions returns an engine on a fresh store, with its checker.
func newRevisions(t *testing.T) *revisions {
	t.Helper()
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	return &revisions{t: t, st: st, eng: eng, last: map[string]int64{}}
}

// item reads the flow's key from the store.
func (r *revisions) item(id string) store.Item {
	r.t.Helper()
	var it store.Item
	require.NoError(r.t, r.st.View(r.t.Context(), func(tx store.ReadTx) error {
		var err error
		it, err = tx.Get("flow/" + id)
		return err
	}))
	return it
}

// check asserts that f, as an operation returned it, and the flow as every
// read returns it, carry the store's revision of the key, that the
// operation wrote the flow `writes` times (0 or 1), and that the stored
// bytes hold no revision of their own.
func (r *revisions) check(op string, f *sdk.Flow, writes int64) {
	r.t.Helper()
	it := r.item(f.ID)
	require.Equal(r.t, it.Revision, f.Revision, "%s: the returned flow carries the store's revision", op)
	require.Equal(r.t, r.last[f.ID]+writes, it.Revision, "%s: %d write(s) to the flow", op, writes)
	r.last[f.ID] = it.Revision

	got, err := r.eng.GetFlow(f.ID)
	require.NoError(r.t, err)
	require.Equal(r.t, it.Revision, got.Revision, "%s: GetFlow", op)
	v, err := r.eng.ViewFlow(f.ID)
	require.NoError(r.t, err)
	require.Equal(r.t, it.Revision, v.Revision, "%s: ViewFlow", op)
	page, err := r.eng.ListFlows(engine.FlowFilter{Status: got.Status})
	require.NoError(r.t, err)
	found := false
	for _, l := range page.Flows {
		if l.ID == f.ID {
			found = true
			require.Equal(r.t, it.Revision, l.Revision, "%s: ListFlows through the status index", op)
		}
	}
	require.True(r.t, found, "%s: ListFlows finds the flow", op)

	var stored map[string]json.RawMessage
	require.NoError(r.t, json.Unmarshal(it.Value, &stored))
	require.NotContains(r.t, stored, "revision", "%s: the record keeps no second counter", op)
}

func TestFlowRevisionIsTheStoreRevision(t *testing.T) {
	t.Parallel()
	r := newRevisions(t)
	eng := r.eng

	// A managed flow through its life.
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)
	r.check("create", f, 1)
	require.Equal(t, int64(1), f.Revision, "a new flow is at revision 1, as a new etcd key is at Version 1")

	f, err = eng.Resume(f.ID, f.Revision, engine.ResumeInput{Status: sdk.FlowRunning})
	require.NoError(t, err)
	r.check("start", f, 1)
	f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{State: json.RawMessage(`{"n":1}`)})
	require.NoError(t, err)
	r.check("update", f, 1)

	_, err = eng.UpdateFlow(f.ID, f.Revision-1, engine.FlowPatch{State: json.RawMessage(`{"n":2}`)})
	rc, ok := errors.AsType[*sdk.RevisionConflictError](err)
	require.True(t, ok, "a stale revision is a conflict, got %v", err)
	require.Equal(t, r.item(f.ID).Revision, rc.Current.Revision, "the conflict carries the store's revision")
	r.check("stale update", f, 0)

	f, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{Wait: json.RawMessage(`{"kind":"approval"}`)})
	require.NoError(t, err)
	r.check("wait", f, 1)
	f, err = eng.Resume(f.ID, f.Revision, engine.ResumeInput{Status: sdk.FlowRunning})
	require.NoError(t, err)
	r.check("resume", f, 1)

	// Child tasks write their own records; the flow moves only when a
	// task's end concerns it.
	task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	require.NoError(t, err)
	r.check("create child task", f, 0)
	finish(t, eng, task.ID, sdk.TaskSucceeded)
	r.check("child task ends", f, 0)

	// A parked event blocks the flow; resuming unparks it.
	_, err = eng.EventFailed(f.ID, 1, engine.EventFailure{Error: "no answer", Park: true, Summary: "controller down"})
	require.NoError(t, err)
	f, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowBlocked, f.Status)
	r.check("event parked", f, 1)
	f, err = eng.Resume(f.ID, f.Revision, engine.ResumeInput{Status: sdk.FlowRunning})
	require.NoError(t, err)
	r.check("unblock", f, 1)

	// A cancel with a running child: requested now, finished when the
	// child settles.
	running, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Status: sdk.TaskRunning})
	require.NoError(t, err)
	res, err := eng.RequestCancel(f.ID, f.Revision)
	require.NoError(t, err)
	r.check("cancel requested", res.Flow, 1)
	res, err = eng.CancelFlow(f.ID, "")
	require.NoError(t, err)
	r.check("cancel repeated", res.Flow, 0)
	_, err = eng.FinishTask(running.ID, engine.FinishInput{Status: sdk.TaskCancelled})
	require.NoError(t, err)
	f, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowCancelled, f.Status)
	r.check("last child settles", f, 1)

	// Finish and fail.
	for _, end := range []func(string, int64, engine.EndInput) (*sdk.Flow, error){eng.Finish, eng.Fail} {
		g, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
		require.NoError(t, err)
		r.check("create", g, 1)
		g, err = end(g.ID, g.Revision, engine.EndInput{State: json.RawMessage(`"done"`)})
		require.NoError(t, err)
		r.check("end", g, 1)
	}
}

func TestMirroredFlowRevisionIsTheStoreRevision(t *testing.T) {
	t.Parallel()
	r := newRevisions(t)
	eng := r.eng
	flowOf := func(task *stored.Task) *sdk.Flow {
		f, err := eng.GetFlow(task.FlowID)
		require.NoError(t, err)
		return f
	}

	// A detached run: its flow is written when the task moves it.
	task := detached(t, eng)
	r.check("create task and mirror", flowOf(task), 1)
	_, err := eng.StartTask(task.ID, engine.StartInput{PID: 1})
	require.NoError(t, err)
	r.check("task starts", flowOf(task), 1)
	_, err = eng.SetProcess(task.ID, 1, engine.StartInput{ShimPID: 2})
	require.NoError(t, err)
	r.check("process recorded", flowOf(task), 0)
	_, err = eng.RecordProgress(task.ID, engine.ProgressInput{From: 0, To: 10, Progress: &sdk.Progress{Phase: "half"}})
	require.NoError(t, err)
	r.check("progress", flowOf(task), 0)
	_, err = eng.RequeueTask(task.ID, engine.RequeueInput{Attempt: 1, RetryAt: time.Now()})
	require.NoError(t, err)
	r.check("retry queued", flowOf(task), 1)
	_, err = eng.CancelTask(task.ID)
	require.NoError(t, err)
	r.check("task cancelled", flowOf(task), 1)

	// Cancelling the flow of a queued run cancels the task and the flow
	// in one write to the flow.
	queued := detached(t, eng)
	r.check("create task and mirror", flowOf(queued), 1)
	res, err := eng.CancelFlow(queued.FlowID, "")
	require.NoError(t, err)
	require.Equal(t, sdk.FlowCancelled, res.Flow.Status)
	r.check("flow cancel", res.Flow, 1)

	// A running run: the cancel request is one write, the end another.
	live := detached(t, eng)
	_, err = eng.StartTask(live.ID, engine.StartInput{})
	require.NoError(t, err)
	r.check("create and start", flowOf(live), 2)
	res, err = eng.CancelFlow(live.FlowID, "")
	require.NoError(t, err)
	r.check("flow cancel requested", res.Flow, 1)
	_, err = eng.FinishTask(live.ID, engine.FinishInput{Status: sdk.TaskCancelled})
	require.NoError(t, err)
	r.check("task ends", flowOf(live), 1)

	// Maintenance: stamping a task's cleanup and repairing indexes leave
	// the flow alone; repairing a mirror that is in step writes nothing.
	_, err = eng.RepairIndexes()
	require.NoError(t, err)
	r.check("index repair", flowOf(live), 0)
	f, err := eng.RepairMirror(live.FlowID)
	require.NoError(t, err)
	r.check("mirror repair in step", f, 0)
}
