package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// An answer converted to the API's words encodes to the same JSON as the
// engine's type it came from: the socket's bytes did not change when the
// API got its own types.
func TestAnswersKeepTheEngineJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 15, 4, 5, 0, time.UTC)
	flow := &sdk.Flow{ID: "f1", OwnerKey: "me", Goal: "ship", Status: sdk.FlowRunning, Revision: 3, CreatedAt: at}
	task := &stored.Task{Task: sdk.Task{ID: "t1", FlowID: "f1", Status: sdk.TaskRunning}, PID: 42}
	usage := &sdk.Usage{InputTokens: 5, OutputTokens: 7}
	view := engine.FlowView{
		Flow: flow, Tasks: []*stored.Task{task}, TaskSummary: sdk.TaskSummary{Total: 1},
		ControllerError: "boom", ContinuedBy: "f2", FirstFailure: "exit 1", RunUsage: usage,
		ChainState: &engine.Chain{ID: "f1", Runs: []string{"f1", "f2"}, Continuation: "f2", Usage: usage,
			Budget: &sdk.Budget{Tokens: 100}, BillingExhaustedAt: at, BillingEvidence: "402", BudgetExhaustedAt: at},
	}
	damaged := []engine.DamagedRecord{{Key: "flow/x", Reason: "not JSON"}}
	entry := engine.HistoryEntry{Seq: 2, At: at, Kind: engine.HistoryGateAnswered, Summary: "approved",
		By: "ana", TaskID: "t1", Data: json.RawMessage(`{"approved":true}`)}
	cases := []struct {
		name      string
		engine    any
		converted any
	}{
		{"flow view", view, flowViewOf(view)},
		{"flow view without chain", engine.FlowView{Flow: flow}, flowViewOf(engine.FlowView{Flow: flow})},
		{"flow view page", engine.FlowViewPage{Flows: []engine.FlowView{view}, Next: "f0", Damaged: damaged},
			flowViewPageOf(engine.FlowViewPage{Flows: []engine.FlowView{view}, Next: "f0", Damaged: damaged})},
		{"task page", engine.TaskPage{Tasks: []*stored.Task{task}, Next: "t0", Damaged: damaged},
			taskPageOf(engine.TaskPage{Tasks: []*stored.Task{task}, Next: "t0", Damaged: damaged})},
		{"history page", engine.HistoryPage{Entries: []engine.HistoryEntry{entry}, Next: 2, Dropped: 1, Status: sdk.FlowRunning},
			historyPageOf(engine.HistoryPage{Entries: []engine.HistoryEntry{entry}, Next: 2, Dropped: 1, Status: sdk.FlowRunning})},
		{"open gates", []engine.OpenGate{{FlowID: "f1", Goal: "ship", Since: at, Gate: json.RawMessage(`{"kind":"approval"}`), Revision: 3}},
			openGatesOf([]engine.OpenGate{{FlowID: "f1", Goal: "ship", Since: at, Gate: json.RawMessage(`{"kind":"approval"}`), Revision: 3}})},
		{"quarantine", []engine.Quarantined{{Key: "task/y", Reason: "no id", At: at, Value: []byte("{}"), DroppedEvents: 2}},
			quarantinedOf([]engine.Quarantined{{Key: "task/y", Reason: "no id", At: at, Value: []byte("{}"), DroppedEvents: 2}})},
	}
	for _, c := range cases {
		want, err := json.Marshal(c.engine)
		require.NoError(t, err, c.name)
		got, err := json.Marshal(c.converted)
		require.NoError(t, err, c.name)
		require.JSONEq(t, string(want), string(got), c.name)
		require.Equal(t, string(want), string(got), "%s: the same bytes, field order too", c.name)
	}
}

// The chain's halt reason reads the same through the API's Chain.
func TestChainHaltedIsTheEngines(t *testing.T) {
	t.Parallel()
	c := engine.Chain{ID: "c1", BillingExhaustedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), BillingEvidence: "402"}
	require.NotEmpty(t, c.Halted())
	require.Equal(t, c.Halted(), ChainHalted(flowViewOf(engine.FlowView{ChainState: &c}).ChainState))
	require.Empty(t, ChainHalted(nil))
}

// Every kind of history entry the API names is the engine's.
func TestHistoryKindsAreTheEngines(t *testing.T) {
	t.Parallel()
	for api, eng := range map[apitype.HistoryKind]engine.HistoryKind{
		apitype.HistoryFlowCreated:         engine.HistoryFlowCreated,
		apitype.HistoryContinuation:        engine.HistoryContinuation,
		apitype.HistoryContinued:           engine.HistoryContinued,
		apitype.HistoryStatus:              engine.HistoryStatus,
		apitype.HistoryRevision:            engine.HistoryRevision,
		apitype.HistoryGateOpened:          engine.HistoryGateOpened,
		apitype.HistoryGateAnswered:        engine.HistoryGateAnswered,
		apitype.HistoryGateRefused:         engine.HistoryGateRefused,
		apitype.HistoryCancelRequested:     engine.HistoryCancelRequested,
		apitype.HistoryControllerError:     engine.HistoryControllerError,
		apitype.HistoryTimerSet:            engine.HistoryTimerSet,
		apitype.HistoryCorrected:           engine.HistoryCorrected,
		apitype.HistoryTimerFired:          engine.HistoryTimerFired,
		apitype.HistoryRetry:               engine.HistoryRetry,
		apitype.HistoryTaskCreated:         engine.HistoryTaskCreated,
		apitype.HistoryTaskStarted:         engine.HistoryTaskStarted,
		apitype.HistoryTaskRetried:         engine.HistoryTaskRetried,
		apitype.HistoryTaskFinished:        engine.HistoryTaskFinished,
		apitype.HistoryTaskLost:            engine.HistoryTaskLost,
		apitype.HistoryTaskCorrected:       engine.HistoryTaskCorrected,
		apitype.HistoryTaskCancelRequested: engine.HistoryTaskCancelRequested,
		apitype.HistoryTaskUpdated:         engine.HistoryTaskUpdated,
		apitype.HistoryMilestone:           engine.HistoryMilestone,
		apitype.HistoryProgress:            engine.HistoryProgress,
		apitype.HistoryDiagnosis:           engine.HistoryDiagnosis,
		apitype.HistoryWake:                engine.HistoryWake,
	} {
		require.Equal(t, string(eng), string(api))
	}
}
