package engine_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// takeNotices returns every due notice and marks it delivered, so the
// next call sees only what was queued since.
func takeNotices(t *testing.T, eng *engine.Engine) []engine.Notice {
	t.Helper()
	due, err := eng.DueNotices(time.Now().Add(time.Hour), 0)
	require.NoError(t, err)
	for _, n := range due {
		require.NoError(t, eng.NoticeDelivered(n.Key))
	}
	return due
}

// policyEvents describes the notices of flow f that go to one of to as
// "<status>@<revision>/<event>", checking their keys and what they carry.
func policyEvents(t *testing.T, f *sdk.Flow, to []string, due []engine.Notice) (events, other []string) {
	t.Helper()
	for _, n := range due {
		if n.Dest == "" {
			other = append(other, n.Key)
			continue
		}
		require.Nil(t, n.To, "a notice with a destination has no finish target")
		var rec sdk.Flow
		require.NoError(t, json.Unmarshal(n.Flow, &rec))
		require.Equal(t, f.ID, n.FlowID)
		require.Equal(t, f.NotifyTemplate, n.Template)
		i, err := strconv.Atoi(n.Key[strings.LastIndexByte(n.Key, '/')+1:])
		require.NoError(t, err)
		require.Equal(t, to[i], n.Dest, "the key names the destination")
		require.Equal(t, fmt.Sprintf("%s/%s/r%d/%d", f.ID, n.Status, rec.Revision, i), n.Key)
		require.NotEmpty(t, n.PreviousStatus)
		require.NotEqual(t, string(rec.Status), n.PreviousStatus, "the status the flow left")
		events = append(events, fmt.Sprintf("%s@%d/%s", n.Status, rec.Revision, n.Event))
	}
	return events, other
}

// TestNotifyPolicyQueuesPerChange: a managed flow with two destinations
// queues, per destination, one flow.finished notice at its end under
// done_only (the default), one notice per status change under
// state_changes (the second visit to running keyed apart by the flow's
// revision), and none under silent, which also holds back the
// controller's configured finish notice but not the flow's own. A write
// that keeps the status queues nothing.
func TestNotifyPolicyQueuesPerChange(t *testing.T) {
	t.Parallel()
	to := []string{"ops", "https://example.test/hook?token=${HOOK_TOKEN}"}
	for _, tc := range []struct {
		policy string
		want   []string
		other  int
	}{
		{sdk.NotifyDoneOnly, []string{"succeeded@5/flow.finished"}, 2},
		{"", []string{"succeeded@5/flow.finished"}, 2},
		{sdk.NotifyStateChanges, []string{"running@2/flow.status", "waiting@3/flow.status", "running@4/flow.status", "succeeded@5/flow.finished"}, 2},
		{sdk.NotifySilent, nil, 1},
	} {
		t.Run("policy="+tc.policy, func(t *testing.T) {
			t.Parallel()
			eng := newEngine(t)
			require.NoError(t, eng.SetControllerNotices(map[string]*sdk.FinishNotify{"ctl": {Command: "ctl-notice"}}))
			f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g",
				NotifyPolicy: tc.policy, NotifyTo: to, NotifyTemplate: "{{.status}}", OnFinish: &sdk.FinishNotify{Command: "own"}})
			require.NoError(t, err)
			var got, other []string
			for _, s := range []sdk.FlowStatus{sdk.FlowRunning, sdk.FlowWaiting, sdk.FlowRunning, sdk.FlowSucceeded} {
				f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{Status: s})
				require.NoError(t, err)
				ev, ot := policyEvents(t, f, to, takeNotices(t, eng))
				got, other = append(got, ev...), append(other, ot...)
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, w, w)
			}
			require.ElementsMatch(t, want, got)
			require.Len(t, other, tc.other, "the flow's own finish notice, and the controller's unless silent: %v", other)
			require.Contains(t, other, f.ID+"/succeeded")
		})
	}

	eng := newEngine(t)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g", NotifyPolicy: sdk.NotifyStateChanges, NotifyTo: to})
	require.NoError(t, err)
	step := "same status"
	_, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{CurrentStep: &step})
	require.NoError(t, err)
	require.Empty(t, takeNotices(t, eng), "no change of status, no notice")
}

// TestNotifyPolicyOfADetachedRun: a detached run's notify settings pass
// to its mirrored flow, whose queued→running→succeeded changes queue one
// notice each under state_changes; a cancel reports aborted.
func TestNotifyPolicyOfADetachedRun(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	to := []string{"cmd:notify-me"}
	run := func(policy string) (*stored.Task, *sdk.Flow) {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true",
			NotifyPolicy: policy, NotifyTo: to, NotifyTemplate: "t"}})
		require.NoError(t, err)
		f, err := eng.GetFlow(task.FlowID)
		require.NoError(t, err)
		require.Equal(t, to, f.NotifyTo)
		require.Equal(t, "t", f.NotifyTemplate)
		return task, f
	}
	task, f := run(sdk.NotifyStateChanges)
	require.Equal(t, sdk.NotifyStateChanges, f.NotifyPolicy)
	_, err := eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 1})
	require.NoError(t, err)
	f, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	got, _ := policyEvents(t, f, to, takeNotices(t, eng))
	require.ElementsMatch(t, []string{"running@2/flow.status", "succeeded@3/flow.finished"}, got)

	task, f = run("")
	require.Equal(t, sdk.NotifyDoneOnly, f.NotifyPolicy, "the default")
	_, err = eng.CancelTask(task.ID)
	require.NoError(t, err)
	f, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	got, _ = policyEvents(t, f, to, takeNotices(t, eng))
	require.Equal(t, []string{sdk.NoticeAborted + "@2/flow.finished"}, got)
}

// TestNotifySettingsRefused: bad notify settings are refused with a
// message naming what was wrong, and nothing is created.
func TestNotifySettingsRefused(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	many := make([]string, engine.MaxNotifyTo+1)
	for i := range many {
		many[i] = "ops"
	}
	managed, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		flow *engine.CreateFlowInput
		task *engine.CreateTaskInput
		want string
	}{
		"bad policy":          {flow: &engine.CreateFlowInput{NotifyPolicy: "loud"}, want: `unknown notify policy "loud"`},
		"too many":            {flow: &engine.CreateFlowInput{NotifyTo: many}, want: "at most 16 are allowed"},
		"empty destination":   {flow: &engine.CreateFlowInput{NotifyTo: []string{" "}}, want: "notify destination 1 is empty"},
		"template too large":  {flow: &engine.CreateFlowInput{NotifyTemplate: strings.Repeat("x", engine.MaxNotifyTemplate+1)}, want: "the notify template is"},
		"task policy":         {task: &engine.CreateTaskInput{Spec: sdk.TaskSpec{NotifyPolicy: "loud"}}, want: `unknown notify policy "loud"`},
		"milestone nowhere":   {task: &engine.CreateTaskInput{Spec: sdk.TaskSpec{NotifyOnMilestone: []string{"done"}}}, want: "has nowhere to go"},
		"milestone name":      {task: &engine.CreateTaskInput{Spec: sdk.TaskSpec{NotifyTo: []string{"ops"}, NotifyOnMilestone: []string{" x"}}}, want: "without surrounding space"},
		"in a managed flow":   {task: &engine.CreateTaskInput{FlowID: managed.ID, Spec: sdk.TaskSpec{NotifyTo: []string{"ops"}}}, want: "through its flow's notify settings"},
		"managed, no targets": {task: &engine.CreateTaskInput{FlowID: managed.ID, Spec: sdk.TaskSpec{NotifyOnMilestone: []string{"done"}}}, want: "has nowhere to go"},
	} {
		if tc.flow != nil {
			in := *tc.flow
			in.OwnerKey, in.ControllerID, in.Goal = "o", "ctl", "g"
			_, err = eng.CreateFlow(in)
		} else {
			in := *tc.task
			in.OwnerKey, in.Spec.Shell = "o", "true"
			_, _, err = eng.CreateTask(in)
		}
		require.ErrorIs(t, err, sdk.ErrInvalid, name)
		require.ErrorContains(t, err, tc.want, name)
	}
	require.Len(t, allFlows(t, eng), 1, "nothing was created")
}

// TestMilestoneNotices: the first report of each milestone a task names
// in NotifyOnMilestone queues one task.milestone notice per destination
// of its flow; a second report of the name, in the same read or a later
// one after the first notice was delivered, queues none; a milestone not
// named queues none.
func TestMilestoneNotices(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	to := []string{"ops", "ntfy://example.test/run"}
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true",
		NotifyPolicy: sdk.NotifySilent, NotifyTo: to, NotifyOnMilestone: []string{"built", "deployed"}}})
	require.NoError(t, err)
	_, err = eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	report := func(from, to int64, names ...string) []string {
		var ms []sdk.Milestone
		for _, n := range names {
			ms = append(ms, sdk.Milestone{Name: n})
		}
		_, err := eng.RecordProgress(task.ID, engine.ProgressInput{From: from, To: to, Milestones: ms})
		require.NoError(t, err)
		var got []string
		for _, n := range takeNotices(t, eng) {
			var rec stored.Task
			require.NoError(t, json.Unmarshal(n.Task, &rec))
			require.Equal(t, task.ID, rec.ID, "the notice carries the task's record")
			require.Contains(t, rec.MilestonesNoticed, n.Milestone)
			require.Equal(t, task.ID, n.TaskID)
			require.Equal(t, engine.NoticeMilestone, n.Event)
			got = append(got, n.Key+" "+n.Dest)
		}
		return got
	}
	require.ElementsMatch(t, []string{task.ID + "/milestone/built/0 ops", task.ID + "/milestone/built/1 " + to[1]},
		report(0, 10, "built", "tested", "built"), "silent holds back flow notices, not the milestones asked for")
	require.ElementsMatch(t, []string{task.ID + "/milestone/deployed/0 ops", task.ID + "/milestone/deployed/1 " + to[1]},
		report(10, 20, "built", "deployed"))
	require.Empty(t, report(20, 30, "deployed", "built"))
	got, err := eng.GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"built", "deployed"}, got.MilestonesNoticed)
	require.Len(t, got.Milestones, 7, "every report is still recorded")
}

// TestContinuationKeepsNotifySettings: a continuation is told about as
// its source was: same policy, destinations and template.
func TestContinuationKeepsNotifySettings(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	src, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g", State: planState(t, threeSteps),
		NotifyPolicy: sdk.NotifyStateChanges, NotifyTo: []string{"ops"}, NotifyTemplate: "t"})
	require.NoError(t, err)
	src, err = eng.Fail(src.ID, src.Revision, engine.EndInput{BlockedSummary: "b failed"})
	require.NoError(t, err)
	succ, _, err := eng.ContinueFlow(src.ID, continueReq(src))
	require.NoError(t, err)
	require.Equal(t, sdk.NotifyStateChanges, succ.NotifyPolicy)
	require.Equal(t, []string{"ops"}, succ.NotifyTo)
	require.Equal(t, "t", succ.NotifyTemplate)
}
