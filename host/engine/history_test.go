package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store/storetest"
	"github.com/flowgate/flowgate/sdk"
)

// historyKinds reads flow id's whole history and returns its kinds, checking
// that its seqs count from 1 without a gap.
func historyKinds(t *testing.T, eng *engine.Engine, id string) ([]engine.HistoryKind, []engine.HistoryEntry) {
	t.Helper()
	page, err := eng.History(id, 0, 0)
	require.NoError(t, err)
	var kinds []engine.HistoryKind
	for i, e := range page.Entries {
		require.Equal(t, int64(i+1), e.Seq, "entry %d: %s", i, e.Summary)
		kinds = append(kinds, e.Kind)
	}
	return kinds, page.Entries
}

func entryOf(t *testing.T, entries []engine.HistoryEntry, kind engine.HistoryKind) engine.HistoryEntry {
	t.Helper()
	for _, e := range entries {
		if e.Kind == kind {
			return e
		}
	}
	require.Failf(t, "no entry", "the history has no %s entry", kind)
	return engine.HistoryEntry{}
}

// TestHistoryListsEveryChangeOnceInOrder drives a flow, its tasks and its
// continuation through every kind of change and reads each change back,
// once, in the order it was made.
func TestHistoryListsEveryChangeOnceInOrder(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "ship it", State: planState(t, threeSteps)})
	require.NoError(t, err)
	f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{Status: sdk.FlowRunning})
	require.NoError(t, err)
	step := "build"
	f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{CurrentStep: &step})
	require.NoError(t, err)

	a, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Label: "compile", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	require.NoError(t, err)
	_, err = eng.StartTask(a.ID, engine.StartInput{})
	require.NoError(t, err)
	half := 0.5
	_, err = eng.RecordProgress(a.ID, engine.ProgressInput{From: 0, To: 10, Progress: &sdk.Progress{Fraction: &half},
		Milestones: []sdk.Milestone{{Name: "linked"}}})
	require.NoError(t, err)
	diag := &sdk.Diagnosis{Attempt: 1, State: "done", Recommendation: "retry"}
	_, err = eng.RequeueTask(a.ID, engine.RequeueInput{Attempt: 1, Error: "flaky", Diagnosis: diag})
	require.NoError(t, err)
	_, err = eng.StartTask(a.ID, engine.StartInput{})
	require.NoError(t, err)
	zero := 0
	_, err = eng.FinishTask(a.ID, engine.FinishInput{Status: sdk.TaskSucceeded, ExitCode: &zero})
	require.NoError(t, err)

	f, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	f, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{Wait: json.RawMessage(`{"kind":"approval","step":"review","prompt":"Publish?"}`)})
	require.NoError(t, err)
	_, err = eng.DecideGate(approve(f.ID, true, "ana"))
	require.NoError(t, err)
	evs, err := eng.Events(f.ID)
	require.NoError(t, err)
	_, err = eng.EventFailed(f.ID, evs[0].Seq, engine.EventFailure{Error: "controller crashed", Counted: true, Park: true, Summary: "controller keeps failing"})
	require.NoError(t, err)
	f, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	f, err = eng.Fail(f.ID, f.Revision, engine.EndInput{BlockedSummary: "b failed"})
	require.NoError(t, err)
	succ, _, err := eng.ContinueFlow(f.ID, continueReq(f))
	require.NoError(t, err)

	kinds, entries := historyKinds(t, eng, f.ID)
	require.Equal(t, []engine.HistoryKind{
		engine.HistoryFlowCreated, engine.HistoryStatus, engine.HistoryRevision,
		engine.HistoryTaskCreated, engine.HistoryTaskStarted, engine.HistoryMilestone, engine.HistoryProgress,
		engine.HistoryTaskRetried, engine.HistoryDiagnosis, engine.HistoryTaskStarted, engine.HistoryTaskFinished,
		engine.HistoryGateOpened, engine.HistoryGateAnswered, engine.HistoryControllerError, engine.HistoryStatus,
		engine.HistoryStatus, engine.HistoryContinued,
	}, kinds)
	answered := entryOf(t, entries, engine.HistoryGateAnswered)
	require.Equal(t, "ana", answered.By)
	require.Contains(t, answered.Summary, "approval gate review approved by ana")
	require.Equal(t, a.ID, entryOf(t, entries, engine.HistoryMilestone).TaskID)
	require.Contains(t, entries[14].Summary, "running → blocked: controller keeps failing")
	require.Contains(t, entryOf(t, entries, engine.HistoryContinued).Summary, "continued as flow "+succ.ID)

	// The successor: a lost task, then a cancel by the operator that
	// stops a running task and ends the flow when it settles.
	lost, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: succ.ID, Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	require.NoError(t, err)
	_, err = eng.StartTask(lost.ID, engine.StartInput{})
	require.NoError(t, err)
	_, err = eng.FinishTask(lost.ID, engine.FinishInput{Status: sdk.TaskLost})
	require.NoError(t, err)
	run, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: succ.ID, Status: sdk.TaskRunning, Spec: sdk.TaskSpec{Argv: []string{"sleep", "9"}}})
	require.NoError(t, err)
	_, err = eng.CancelFlow(succ.ID, "")
	require.NoError(t, err)
	_, err = eng.FinishTask(run.ID, engine.FinishInput{Status: sdk.TaskCancelled})
	require.NoError(t, err)

	kinds, entries = historyKinds(t, eng, succ.ID)
	require.Equal(t, []engine.HistoryKind{
		engine.HistoryContinuation,
		engine.HistoryTaskCreated, engine.HistoryTaskStarted, engine.HistoryTaskLost,
		engine.HistoryTaskCreated, engine.HistoryTaskCancelRequested, engine.HistoryCancelRequested,
		engine.HistoryTaskFinished, engine.HistoryStatus,
	}, kinds)
	require.Equal(t, engine.CancelByOperator, entryOf(t, entries, engine.HistoryCancelRequested).By)
	require.Equal(t, "queued → cancelled", entries[8].Summary)
}

func TestHistoryPagesAfterASeq(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := parkAtGate(t, eng, sdk.GateApproval)
	page, err := eng.History(f.ID, 1, 1)
	require.NoError(t, err)
	require.Len(t, page.Entries, 1)
	require.Equal(t, engine.HistoryGateOpened, page.Entries[0].Kind)
	require.Equal(t, int64(2), page.Next)
	require.Equal(t, sdk.FlowWaiting, page.Status)
	page, err = eng.History(f.ID, 2, 0)
	require.NoError(t, err)
	require.Empty(t, page.Entries)
	require.Equal(t, int64(2), page.Next, "an empty page keeps the cursor")

	_, err = eng.History("nope", 0, 0)
	require.ErrorIs(t, err, sdk.ErrNotFound)
	_, err = eng.History(f.ID, -1, 0)
	require.ErrorIs(t, err, sdk.ErrInvalid)
}

// TestHistoryBoundDropsProgressFirst fills a small history with progress:
// the oldest progress goes first, then other ordinary entries, and
// milestones and the flow's creation are never dropped.
func TestHistoryBoundDropsProgressFirst(t *testing.T) {
	t.Parallel()
	eng, err := engine.New(openStore(t), engine.Config{HistoryLimit: 6})
	require.NoError(t, err)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Status: sdk.TaskRunning})
	require.NoError(t, err)
	for i := range 10 {
		frac := float64(i) / 10
		in := engine.ProgressInput{From: int64(i), To: int64(i + 1), Progress: &sdk.Progress{Fraction: &frac}}
		if i%3 == 0 {
			in.Milestones = []sdk.Milestone{{Name: "m"}}
		}
		_, err := eng.RecordProgress(task.ID, in)
		require.NoError(t, err)
	}
	page, err := eng.History(f.ID, 0, 0)
	require.NoError(t, err)
	var kinds []engine.HistoryKind
	for _, e := range page.Entries {
		kinds = append(kinds, e.Kind)
	}
	// 2 + 10 progress + 4 milestones = 16 entries, 6 kept: the creation,
	// the 4 milestones and the latest progress; the task's creation went
	// once no progress but the latest was left.
	require.Equal(t, []engine.HistoryKind{engine.HistoryFlowCreated, engine.HistoryMilestone, engine.HistoryMilestone,
		engine.HistoryMilestone, engine.HistoryMilestone, engine.HistoryProgress}, kinds)
	require.Equal(t, int64(10), page.Dropped)
	require.Equal(t, int64(16), page.Entries[len(page.Entries)-1].Seq, "seqs keep counting across the drops")
}

func TestPruneFlowRemovesItsHistory(t *testing.T) {
	t.Parallel()
	eng, st, c := newClockEngine(t)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)
	a, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID})
	require.NoError(t, err)
	finish(t, eng, a.ID, sdk.TaskSucceeded)
	f, err = eng.GetFlow(f.ID)
	require.NoError(t, err)
	_, err = eng.Finish(f.ID, f.Revision, engine.EndInput{})
	require.NoError(t, err)
	other := createFlow(t, eng)
	require.NotEmpty(t, keysUnder(t, st, "history/"+f.ID+"/"))

	_, err = eng.PruneFlow(f.ID, c.t)
	require.NoError(t, err)
	require.Empty(t, keysUnder(t, st, "history/"+f.ID+"/"))
	_, err = eng.History(f.ID, 0, 0)
	require.ErrorIs(t, err, sdk.ErrNotFound)
	kinds, _ := historyKinds(t, eng, other.ID)
	require.Equal(t, []engine.HistoryKind{engine.HistoryFlowCreated}, kinds, "another flow's history is untouched")
}

func TestQuarantineTakesAFlowsHistory(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	bad := createFlow(t, eng)
	require.NotEmpty(t, keysUnder(t, st, "history/"+bad.ID+"/"))
	storetest.EditRecord(t, st, "flow/"+bad.ID, map[string]any{"status": "done"})
	_, err = eng.Quarantine("flow/" + bad.ID)
	require.NoError(t, err)
	require.Empty(t, keysUnder(t, st, "history/"+bad.ID+"/"), "no history outlives its flow")
}

// TestExpiredGateIsAnsweredByFlowgate: an expired gate's denial is in the
// history as answered by the gateway, with the reason.
func TestExpiredGateIsAnsweredByFlowgate(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g", State: json.RawMessage(`{}`)})
	require.NoError(t, err)
	_, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{Wait: json.RawMessage(`{"kind":"approval","step":"s","until":"2000-01-01T00:00:00Z"}`)})
	require.NoError(t, err)
	expired, err := eng.ExpireGates()
	require.NoError(t, err)
	require.Equal(t, []string{f.ID}, expired)
	_, entries := historyKinds(t, eng, f.ID)
	last := entries[len(entries)-1]
	require.Equal(t, engine.HistoryGateAnswered, last.Kind)
	require.Equal(t, engine.ExpiredBy, last.By)
	require.Equal(t, "approval gate s denied by flowgate (gate-expired) (waiting → running)", last.Summary)
}
