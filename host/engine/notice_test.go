package engine_test

import (
	"encoding/json"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// noticed returns the keys of the due notices, in delivery order.
func noticed(t *testing.T, eng *engine.Engine) []string {
	t.Helper()
	due, err := eng.DueNotices(time.Now().Add(time.Hour), 100)
	require.NoError(t, err)
	var keys []string
	for _, n := range due {
		keys = append(keys, n.Status)
		var task stored.Task
		require.NoError(t, json.Unmarshal(n.Task, &task))
		require.Equal(t, n.TaskID, task.ID, "the notice carries the record")
	}
	return keys
}

// TestFinishNotices: a task that asks for finish notices gets one when it
// is interrupted and one when it ends, queued with the change, once
// each; a cancel is reported as aborted; a task that asks for none gets
// none; a delivered notice is gone.
func TestFinishNotices(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	to := &sdk.FinishNotify{Command: "true"}
	create := func(notify *sdk.FinishNotify) *stored.Task {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true", OnFinish: notify}})
		require.NoError(t, err)
		_, err = eng.StartTask(task.ID, engine.StartInput{})
		require.NoError(t, err)
		return task
	}

	task := create(to)
	require.Empty(t, noticed(t, eng), "starting is not reported")
	got, err := eng.InterruptTask(task.ID, 1, sdk.Interruption{Reason: "no-progress", ChildStillRunning: true})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status, "an interruption is no end")
	require.True(t, got.Interrupted.ChildStillRunning)
	_, err = eng.InterruptTask(task.ID, 1, sdk.Interruption{Reason: "budget-exceeded"})
	require.NoError(t, err)
	require.Equal(t, []string{sdk.NoticeInterrupted}, noticed(t, eng), "interrupted once")

	_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 1})
	require.NoError(t, err)
	require.Equal(t, []string{sdk.NoticeInterrupted, "succeeded"}, noticed(t, eng), "the late finish is reported too")

	require.NoError(t, eng.NoticeDelivered(task.ID+"/"+sdk.NoticeInterrupted))
	require.NoError(t, eng.NoticeFailed(task.ID+"/succeeded", "receiver down", time.Now().Add(2*time.Hour)))
	require.Empty(t, noticed(t, eng), "a failed delivery waits for its next try")

	quiet := create(nil)
	_, err = eng.FinishTask(quiet.ID, engine.FinishInput{Status: sdk.TaskFailed, Attempt: 1})
	require.NoError(t, err)
	require.Empty(t, noticed(t, eng))

	cancelled := create(to)
	_, err = eng.CancelTask(cancelled.ID)
	require.NoError(t, err)
	_, err = eng.CancelTask(cancelled.ID)
	require.NoError(t, err, "cancelling again is harmless")
	_, err = eng.FinishTask(cancelled.ID, engine.FinishInput{Status: sdk.TaskCancelled, Attempt: 1, Reason: "cancelled"})
	require.NoError(t, err)
	require.Equal(t, []string{sdk.NoticeAborted}, noticed(t, eng))
	_, err = eng.CancelTask(cancelled.ID)
	require.ErrorIs(t, err, sdk.ErrTerminal, "the controller contract: a cancelled task is ended")
	require.Equal(t, []string{sdk.NoticeAborted}, noticed(t, eng), "aborted is delivered once")
}

// TestFinishNoticeSpecChecks: on_finish and on_no_progress are checked.
func TestFinishNoticeSpecChecks(t *testing.T) {
	t.Parallel()
	for _, spec := range []sdk.TaskSpec{
		{Shell: "true", OnFinish: &sdk.FinishNotify{}},
		{Shell: "true", OnFinish: &sdk.FinishNotify{Webhook: "ftp://x"}},
		{Shell: "true", OnNoProgress: "pause"},
		{Shell: "true", Probe: "nocolon"},
	} {
		require.ErrorIs(t, engine.ValidateSpec(spec), sdk.ErrInvalid, "%+v", spec)
	}
}

// flowNotices returns the due flow notices, checking each carries the
// flow's record as of its status.
func flowNotices(t *testing.T, eng *engine.Engine) []engine.Notice {
	t.Helper()
	due, err := eng.DueNotices(time.Now().Add(time.Hour), 100)
	require.NoError(t, err)
	for _, n := range due {
		var f sdk.Flow
		require.NoError(t, json.Unmarshal(n.Flow, &f))
		require.Equal(t, n.FlowID, f.ID, "the notice carries the record")
		require.Empty(t, n.TaskID)
	}
	return due
}

// TestFlowFinishNotices: a flow that asks for a finish notice gets one
// when it ends, queued with its terminal status and carrying its final
// record, once per (flow, status); a cancel is reported as aborted; a
// flow that asks for none gets none.
func TestFlowFinishNotices(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	create := func(to *sdk.FinishNotify) *sdk.Flow {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g", OnFinish: to})
		require.NoError(t, err)
		return f
	}
	to := &sdk.FinishNotify{Webhook: "http://127.0.0.1:9/hook"}
	f := create(to)
	require.Equal(t, to, f.OnFinish)
	f, err := eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{Status: sdk.FlowRunning})
	require.NoError(t, err)
	require.Empty(t, flowNotices(t, eng), "running is no end")
	f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{Status: sdk.FlowSucceeded})
	require.NoError(t, err)
	due := flowNotices(t, eng)
	require.Len(t, due, 1)
	require.Equal(t, f.ID+"/succeeded", due[0].Key)
	require.Equal(t, "succeeded", due[0].Status)
	require.Equal(t, to, due[0].To)
	var final sdk.Flow
	require.NoError(t, json.Unmarshal(due[0].Flow, &final))
	require.Equal(t, f.Revision, final.Revision, "the final record")
	require.Equal(t, sdk.FlowSucceeded, final.Status)
	require.NoError(t, eng.NoticeDelivered(due[0].Key))

	create(nil)
	cancelled := create(to)
	_, err = eng.CancelFlow(cancelled.ID, "") // a queued flow is cancelled at once
	require.NoError(t, err)
	_, err = eng.CancelFlow(cancelled.ID, "")
	require.ErrorIs(t, err, sdk.ErrTerminal, "a cancelled flow is ended")
	due = flowNotices(t, eng)
	require.Len(t, due, 1, "aborted once, and nothing for the flow that asked for none")
	require.Equal(t, cancelled.ID+"/"+sdk.NoticeAborted, due[0].Key)

	_, err = eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g", OnFinish: &sdk.FinishNotify{Webhook: "ftp://x"}})
	require.ErrorIs(t, err, sdk.ErrInvalid)
}

// TestControllerFinishNotices: a controller whose config names on_finish
// gets a notice for every flow it drives when the flow ends, carrying
// the final record and keyed apart from the flow's own notice, once per
// (flow, status), aborted for a cancel; other controllers' flows get
// none; a target removed from the config stops applying; a bad one is
// refused naming the controller.
func TestControllerFinishNotices(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	ctl, own := &sdk.FinishNotify{Command: "notify-ctl"}, &sdk.FinishNotify{Command: "notify-own"}
	require.NoError(t, eng.SetControllerNotices(map[string]*sdk.FinishNotify{"ctl": ctl, "quiet": nil}))
	create := func(controller string, to *sdk.FinishNotify) *sdk.Flow {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: controller, Goal: "g", OnFinish: to})
		require.NoError(t, err)
		return f
	}
	f := create("ctl", own)
	other := create("other", nil)
	f, err := eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{Status: sdk.FlowRunning})
	require.NoError(t, err)
	require.Empty(t, flowNotices(t, eng), "running is no end")
	f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{Status: sdk.FlowFailed})
	require.NoError(t, err)
	_, err = eng.CancelFlow(other.ID, "")
	require.NoError(t, err)
	due := flowNotices(t, eng)
	require.Len(t, due, 2, "the flow's own and its controller's; none for the other controller's flow")
	byKey := map[string]engine.Notice{}
	for _, n := range due {
		byKey[n.Key] = n
	}
	n, ok := byKey[f.ID+"/failed/controller"]
	require.True(t, ok, "%v", byKey)
	require.Equal(t, "ctl", n.Controller)
	require.Equal(t, ctl, n.To)
	require.Equal(t, "failed", n.Status)
	var final sdk.Flow
	require.NoError(t, json.Unmarshal(n.Flow, &final))
	require.Equal(t, f.Revision, final.Revision, "the final record")
	require.Equal(t, own, byKey[f.ID+"/failed"].To)
	require.Empty(t, byKey[f.ID+"/failed"].Controller)

	cancelled := create("ctl", nil)
	_, err = eng.CancelFlow(cancelled.ID, "")
	require.NoError(t, err)
	_, err = eng.CancelFlow(cancelled.ID, "")
	require.ErrorIs(t, err, sdk.ErrTerminal)
	require.Len(t, flowNotices(t, eng), 3, "aborted once")
	require.Contains(t, keys(flowNotices(t, eng)), cancelled.ID+"/"+sdk.NoticeAborted+"/controller")

	require.NoError(t, eng.SetControllerNotices(nil))
	gone := create("ctl", nil)
	_, err = eng.CancelFlow(gone.ID, "")
	require.NoError(t, err)
	require.Len(t, flowNotices(t, eng), 3, "a target removed from the config no longer applies")

	err = eng.SetControllerNotices(map[string]*sdk.FinishNotify{"ctl": {Webhook: "ftp://x"}})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "plugins.ctl")
}

func keys(due []engine.Notice) []string {
	var out []string
	for _, n := range due {
		out = append(out, n.Key)
	}
	return out
}

// TestDueNoticesOldestFirstPastTheLimit: the notices DueNotices returns
// are the oldest queued, whatever their keys' order, and a limit of 0
// returns them all.
func TestDueNoticesOldestFirstPastTheLimit(t *testing.T) {
	t.Parallel()
	var tick atomic.Int64
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	eng, err := engine.New(openStore(t), engine.Config{Now: func() time.Time {
		return start.Add(time.Duration(tick.Add(1)) * time.Second)
	}})
	require.NoError(t, err)
	to := &sdk.FinishNotify{Webhook: "http://127.0.0.1:9/hook"}
	var ids []string
	for range 5 {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g", OnFinish: to})
		require.NoError(t, err)
		ids = append(ids, f.ID)
	}
	// Ended in the reverse of their keys' order, so the oldest notice
	// has the greatest key.
	slices.Sort(ids)
	slices.Reverse(ids)
	for _, id := range ids {
		_, err := eng.UpdateFlow(id, 1, engine.FlowPatch{Status: sdk.FlowFailed})
		require.NoError(t, err)
	}
	later := start.Add(time.Hour)
	for limit := 1; limit <= len(ids); limit++ {
		due, err := eng.DueNotices(later, limit)
		require.NoError(t, err)
		var got []string
		for _, n := range due {
			got = append(got, n.FlowID)
		}
		require.Equal(t, ids[:limit], got, "limit %d: the oldest, oldest first", limit)
	}
	all, err := eng.DueNotices(later, 0)
	require.NoError(t, err)
	require.Len(t, all, len(ids), "limit 0 is no limit")
}
