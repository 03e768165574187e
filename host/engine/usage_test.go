package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// report records one usage report for running task id at its current
// progress offset.
func report(t *testing.T, eng *engine.Engine, id string, u sdk.Usage) {
	t.Helper()
	task, err := eng.GetTask(id)
	require.NoError(t, err)
	_, err = eng.RecordProgress(id, engine.ProgressInput{From: task.ProgressOffset, To: task.ProgressOffset + 1, Usage: &u})
	require.NoError(t, err)
}

// TestChainBudgetIsCumulative: the usage of every task of a chain adds up
// against its budget; once reached, the chain accepts no new task, while
// the task already running keeps running and keeps reporting.
func TestChainBudgetIsCumulative(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g", Budget: &sdk.Budget{Tokens: 100, Cost: 2}})
	require.NoError(t, err)
	a, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Status: sdk.TaskRunning})
	require.NoError(t, err)
	b, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Status: sdk.TaskRunning})
	require.NoError(t, err)

	report(t, eng, a.ID, sdk.Usage{InputTokens: 30, OutputTokens: 10, TokenReports: 1})
	report(t, eng, b.ID, sdk.Usage{InputTokens: 40, TokenReports: 1, Cost: 0.5, CostReports: 1})
	why, err := eng.FlowHalted(f.ID)
	require.NoError(t, err)
	require.Empty(t, why, "80 of 100 tokens")

	report(t, eng, a.ID, sdk.Usage{OutputTokens: 20, TokenReports: 1})
	why, err = eng.FlowHalted(f.ID)
	require.NoError(t, err)
	require.Contains(t, why, "used its budget")
	require.Contains(t, why, "100 tokens from 3 reports")

	_, _, err = eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Spec: sdk.TaskSpec{Shell: "true"}})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "accepts no new tasks")

	// A call already running is not stopped; what it reports still counts.
	report(t, eng, b.ID, sdk.Usage{InputTokens: 5, TokenReports: 1})
	v, err := eng.ViewFlow(f.ID)
	require.NoError(t, err)
	want := &sdk.Usage{InputTokens: 75, OutputTokens: 30, Cost: 0.5, TokenReports: 4, CostReports: 1}
	require.Equal(t, want, v.RunUsage)
	require.Equal(t, want, v.ChainState.Usage)
	require.Equal(t, &sdk.Budget{Tokens: 100, Cost: 2}, v.ChainState.Budget)
	require.False(t, v.ChainState.BudgetExhaustedAt.IsZero())
	got, err := eng.GetTask(a.ID)
	require.NoError(t, err)
	require.Equal(t, &sdk.Usage{InputTokens: 30, OutputTokens: 30, TokenReports: 2}, got.Usage, "each task keeps only its own usage")
}

// TestMissingUsageIsNotZero: a flow whose tasks reported nothing has no
// usage at all, and a cost budget is not reached by token reports that
// carry no cost.
func TestMissingUsageIsNotZero(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Status: sdk.TaskRunning, Budget: &sdk.Budget{Cost: 1}})
	require.NoError(t, err)
	v, err := eng.ViewFlow(task.FlowID)
	require.NoError(t, err)
	require.Nil(t, v.RunUsage)
	require.Nil(t, v.ChainState.Usage)
	report(t, eng, task.ID, sdk.Usage{InputTokens: 1 << 40, TokenReports: 1})
	v, err = eng.ViewFlow(task.FlowID)
	require.NoError(t, err)
	require.Zero(t, v.ChainState.Usage.CostReports)
	require.True(t, v.ChainState.BudgetExhaustedAt.IsZero(), "no cost was reported, so none counts against the cost budget")
}

func TestBudgetRefusals(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	_, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g", Budget: &sdk.Budget{Tokens: -1}})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "must not be negative")
	f := createFlow(t, eng)
	_, _, err = eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Budget: &sdk.Budget{Tokens: 5}})
	require.ErrorContains(t, err, "shares its flow's budget")
}

func TestBillingExhaustedChain(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	a, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Status: sdk.TaskRunning})
	require.NoError(t, err)
	_, err = eng.FinishTask(a.ID, engine.FinishInput{Status: sdk.TaskFailed, Class: sdk.FailureBilling, Error: "insufficient_quota"})
	require.NoError(t, err)
	c, err := eng.GetChain(f.ID)
	require.NoError(t, err)
	first := c.BillingExhaustedAt
	require.False(t, first.IsZero(), "a billing failure marks its chain in the same transaction")
	require.NoError(t, eng.MarkChainBillingExhausted(f.ID, "insufficient_quota"))
	c, err = eng.GetChain(f.ID)
	require.NoError(t, err)
	require.Equal(t, first, c.BillingExhaustedAt, "marking twice keeps the first time")
	_, _, err = eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Spec: sdk.TaskSpec{Shell: "true"}})
	require.ErrorContains(t, err, "billing-exhausted")
}

// TestInPlaceRetryIsOnce: the engine refuses a second in-place retry of
// a task, whoever asks.
func TestInPlaceRetryIsOnce(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	for i, wantErr := range []bool{false, true} {
		task, err = eng.StartTask(task.ID, engine.StartInput{})
		require.NoError(t, err)
		_, err = eng.RequeueTask(task.ID, engine.RequeueInput{Attempt: i + 1, InPlace: true, Class: sdk.FailureStartup})
		if wantErr {
			require.ErrorContains(t, err, "already had its one in-place retry")
			continue
		}
		require.NoError(t, err)
	}
}

// TestTaskFinishedCarriesTheAdvice: a controller learns a failure's class
// and the diagnoser's recommendation from task.finished.
func TestTaskFinishedCarriesTheAdvice(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Status: sdk.TaskRunning})
	require.NoError(t, err)
	_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskFailed, Class: sdk.FailureNeedsDiagnosis,
		Diagnosis: &sdk.Diagnosis{Attempt: 1, State: sdk.DiagnosisDone, Evidence: "e", Recommendation: sdk.RecommendRevise}})
	require.NoError(t, err)
	evs, err := eng.Events(f.ID)
	require.NoError(t, err)
	last := evs[len(evs)-1]
	require.Equal(t, sdk.EventTaskFinished, last.Type)
	require.JSONEq(t, `{"status":"failed","exit_code":null,"class":"needs_diagnosis","diagnosis":{"state":"done","recommendation":"revise"}}`, string(last.Data))
}
