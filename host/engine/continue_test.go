package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// planState is a controller state whose plan has steps a, b, c in a row,
// a succeeded and b failed.
func planState(t testing.TB, plan sdk.Plan) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(map[string]any{sdk.PlanKey: plan})
	require.NoError(t, err)
	return b
}

var threeSteps = sdk.Plan{Controller: "ctl@1", Nodes: []sdk.PlanNode{
	{ID: "a", Status: sdk.NodeSucceeded},
	{ID: "b", DependsOn: []string{"a"}, Status: sdk.NodeFailed},
	{ID: "c", DependsOn: []string{"b"}},
}}

// failedFlow makes a managed flow with plan p and ends it failed (or
// partial).
func failedFlow(t testing.TB, eng *engine.Engine, p sdk.Plan, partial bool) *sdk.Flow {
	t.Helper()
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "owner-a", ControllerID: "ctl", Goal: "g", State: planState(t, p)})
	require.NoError(t, err)
	f, err = eng.Fail(f.ID, f.Revision, engine.EndInput{Partial: partial, BlockedSummary: "b failed"})
	require.NoError(t, err)
	return f
}

func continueReq(f *sdk.Flow) sdk.ContinueRequest {
	return sdk.ContinueRequest{ExpectedRevision: f.Revision, Reason: "b hit a flaky network"}
}

func TestContinueFlowStoresTheReceiptAndQueuesTheStart(t *testing.T) {
	t.Parallel()
	for _, partial := range []bool{false, true} {
		eng := newEngine(t)
		src := failedFlow(t, eng, threeSteps, partial)
		succ, created, err := eng.ContinueFlow(src.ID, continueReq(src))
		require.NoError(t, err)
		require.True(t, created)
		require.NotEqual(t, src.ID, succ.ID)
		require.Equal(t, sdk.FlowQueued, succ.Status)
		require.Equal(t, src.ID, succ.ChainID)
		require.Equal(t, src.ID, succ.SourceFlowID)
		require.Equal(t, src.Revision, succ.SourceRevision)
		require.Equal(t, &sdk.Continuation{ChainID: src.ID, SourceFlowID: src.ID, SourceRevision: src.Revision,
			Reason: "b hit a flaky network", Assignments: []sdk.Assignment{{Node: "b"}, {Node: "c"}},
			Reuse: []string{"a"}, Rerun: []string{"b", "c"}}, succ.Continuation)
		require.JSONEq(t, string(src.State), string(succ.State), "the successor starts from the source's state")
		require.Equal(t, []sdk.EventType{sdk.EventFlowStarted}, eventTypes(t, eng, succ.ID))

		stored, err := eng.GetFlow(succ.ID)
		require.NoError(t, err)
		require.Equal(t, succ.Continuation, stored.Continuation)
		ch, err := eng.GetChain(src.ID)
		require.NoError(t, err)
		require.Equal(t, []string{src.ID, succ.ID}, ch.Runs)
		require.Equal(t, succ.ID, ch.Continuation)
	}
}

func TestContinueFlowDuplicates(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	src := failedFlow(t, eng, threeSteps, false)
	first, created, err := eng.ContinueFlow(src.ID, continueReq(src))
	require.NoError(t, err)
	require.True(t, created)

	again, created, err := eng.ContinueFlow(src.ID, continueReq(src))
	require.NoError(t, err, "an identical submission returns the successor")
	require.False(t, created)
	require.Equal(t, first.ID, again.ID)

	other := continueReq(src)
	other.Reason = "something else"
	_, _, err = eng.ContinueFlow(src.ID, other)
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "(one continuation)")
	require.Len(t, allFlows(t, eng), 2, "a conflicting submission creates nothing")

	_, _, err = eng.ContinueFlow(first.ID, sdk.ContinueRequest{ExpectedRevision: first.Revision, Reason: "again"})
	require.ErrorContains(t, err, "(two runs)", "a continuation is never continued")
}

func TestContinueFlowConcurrentSubmissionsMakeOneSuccessor(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	src := failedFlow(t, eng, threeSteps, false)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		ids   = map[string]int{}
		made  int
		other int
	)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := continueReq(src)
			if i%2 == 1 {
				req.Review = "conflicting"
			}
			succ, created, err := eng.ContinueFlow(src.ID, req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				require.ErrorContains(t, err, "(one continuation)")
				other++
				return
			}
			ids[succ.ID]++
			if created {
				made++
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 1, made)
	require.Len(t, ids, 1)
	require.Equal(t, 10, other, "the ten submissions unlike the winner's are refused")
	require.Len(t, allFlows(t, eng), 2)
}

func TestContinueFlowRefusals(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	def := filepath.Join(t.TempDir(), "wf.lobster")
	require.NoError(t, os.WriteFile(def, []byte("steps: []\n"), 0o600))
	withFile := threeSteps
	withFile.DefinitionFile, withFile.DefinitionHash = def, sdk.HashDefinition([]byte("steps: []\n"))

	cases := map[string]struct {
		setup func(t *testing.T) (*sdk.Flow, sdk.ContinueRequest)
		want  string
	}{
		"running source": {func(t *testing.T) (*sdk.Flow, sdk.ContinueRequest) {
			f := createFlow(t, eng)
			return f, continueReq(f)
		}, "(settled failed)"},
		"succeeded source": {func(t *testing.T) (*sdk.Flow, sdk.ContinueRequest) {
			f := createFlow(t, eng)
			f, err := eng.Finish(f.ID, f.Revision, engine.EndInput{})
			require.NoError(t, err)
			return f, continueReq(f)
		}, "(settled failed)"},
		"cancelled source": {func(t *testing.T) (*sdk.Flow, sdk.ContinueRequest) {
			f := createFlow(t, eng)
			_, err := eng.CancelFlow(f.ID, "")
			require.NoError(t, err)
			f, err = eng.GetFlow(f.ID)
			require.NoError(t, err)
			return f, continueReq(f)
		}, "(cancelled)"},
		"lost task": {func(t *testing.T) (*sdk.Flow, sdk.ContinueRequest) {
			f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g", State: planState(t, threeSteps)})
			require.NoError(t, err)
			task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, OwnerKey: "o", Runtime: "cli", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
			require.NoError(t, err)
			_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskLost, Error: "gateway died"})
			require.NoError(t, err)
			f, err = eng.GetFlow(f.ID)
			require.NoError(t, err)
			f, err = eng.Fail(f.ID, f.Revision, engine.EndInput{})
			require.NoError(t, err)
			return f, continueReq(f)
		}, "(outcome unknown)"},
		"no plan": {func(t *testing.T) (*sdk.Flow, sdk.ContinueRequest) {
			f := createFlow(t, eng)
			f, err := eng.Fail(f.ID, f.Revision, engine.EndInput{})
			require.NoError(t, err)
			return f, continueReq(f)
		}, "(plan snapshot)"},
		"controller changed": {func(t *testing.T) (*sdk.Flow, sdk.ContinueRequest) {
			f := failedFlow(t, eng, threeSteps, false)
			req := continueReq(f)
			req.Controller = "ctl@2"
			return f, req
		}, "(controller changed)"},
		"definition changed": {func(t *testing.T) (*sdk.Flow, sdk.ContinueRequest) {
			p := withFile
			p.DefinitionHash = sdk.HashDefinition([]byte("steps: [old]\n"))
			f := failedFlow(t, eng, p, false)
			return f, continueReq(f)
		}, "(definition changed)"},
		"definition gone": {func(t *testing.T) (*sdk.Flow, sdk.ContinueRequest) {
			p := withFile
			p.DefinitionFile = def + ".gone"
			f := failedFlow(t, eng, p, false)
			return f, continueReq(f)
		}, "(definition changed)"},
		"no reason": {func(t *testing.T) (*sdk.Flow, sdk.ContinueRequest) {
			f := failedFlow(t, eng, threeSteps, false)
			return f, sdk.ContinueRequest{ExpectedRevision: f.Revision, Reason: "  "}
		}, "needs a reason"},
		"missing assignment": {func(t *testing.T) (*sdk.Flow, sdk.ContinueRequest) {
			f := failedFlow(t, eng, threeSteps, false)
			req := continueReq(f)
			req.Assignments = []sdk.Assignment{{Node: "b"}}
			return f, req
		}, "(remaining assignments)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			src, req := tc.setup(t)
			before := len(allFlows(t, eng))
			_, _, err := eng.ContinueFlow(src.ID, req)
			require.ErrorIs(t, err, sdk.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
			require.Len(t, allFlows(t, eng), before, "a refusal creates nothing")
		})
	}
	ok := failedFlow(t, eng, withFile, false)
	_, created, err := eng.ContinueFlow(ok.ID, continueReq(ok))
	require.NoError(t, err, "an unchanged definition file is accepted")
	require.True(t, created)
}

func TestContinueFlowRefusesAStaleRevision(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	src := failedFlow(t, eng, threeSteps, false)
	req := continueReq(src)
	req.ExpectedRevision--
	_, _, err := eng.ContinueFlow(src.ID, req)
	var conflict *sdk.RevisionConflictError
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, src.Revision, conflict.Current.Revision)
}

// putChain writes a chain record as failure classification and usage
// accounting will, straight into the store.
func putChain(t *testing.T, st store.Store, c engine.Chain) {
	t.Helper()
	b, err := json.Marshal(c)
	require.NoError(t, err)
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("chain/"+c.ID, b)
		return err
	}))
}

func TestContinueFlowRefusesAnExhaustedChain(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		chain engine.Chain
		want  string
	}{
		"billing":     {engine.Chain{BillingExhaustedAt: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), BillingEvidence: "insufficient_quota"}, "(billing exhausted)"},
		"token limit": {engine.Chain{Usage: &sdk.Usage{InputTokens: 600, OutputTokens: 400, TokenReports: 2}, Budget: &sdk.Budget{Tokens: 1000}}, "(budget exhausted)"},
		"cost limit":  {engine.Chain{Usage: &sdk.Usage{Cost: 2.5, CostReports: 1}, Budget: &sdk.Budget{Cost: 2}}, "(budget exhausted)"},
	} {
		t.Run(name, func(t *testing.T) {
			st := openStore(t)
			eng, err := engine.New(st, engine.Config{})
			require.NoError(t, err)
			src := failedFlow(t, eng, threeSteps, false)
			tc.chain.ID = src.ID
			putChain(t, st, tc.chain)
			_, _, err = eng.ContinueFlow(src.ID, continueReq(src))
			require.ErrorIs(t, err, sdk.ErrInvalid)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// A gateway that dies after accepting a continuation leaves the
// successor's start in the outbox: the next one delivers it, once.
func TestAcceptedContinuationStartsAfterARestart(t *testing.T) {
	bboltOnly(t)
	t.Parallel()
	path := filepath.Join(t.TempDir(), "flowgate.db")
	st, err := store.Open(path, store.Options{})
	require.NoError(t, err)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	src := failedFlow(t, eng, threeSteps, false)
	succ, _, err := eng.ContinueFlow(src.ID, continueReq(src))
	require.NoError(t, err)
	require.NoError(t, st.Close())

	st, err = store.Open(path, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	eng, err = engine.New(st, engine.Config{})
	require.NoError(t, err)
	starts := func() []*sdk.Event {
		ds, err := eng.NextDeliveries(0, nil)
		require.NoError(t, err)
		var out []*sdk.Event
		for _, d := range ds {
			if d.Event.FlowID == succ.ID {
				out = append(out, d.Event)
			}
		}
		return out
	}
	evs := starts()
	require.Len(t, evs, 1)
	require.Equal(t, sdk.EventFlowStarted, evs[0].Type)
	require.NoError(t, eng.AckEvent(succ.ID, evs[0].Seq))
	require.Empty(t, starts(), "once acknowledged the start is not delivered again")
}

func TestPruningBothRunsRemovesTheChainRecord(t *testing.T) {
	t.Parallel()
	eng, st, clk := newClockEngine(t)
	src := failedFlow(t, eng, threeSteps, false)
	succ, _, err := eng.ContinueFlow(src.ID, continueReq(src))
	require.NoError(t, err)
	succ, err = eng.Fail(succ.ID, succ.Revision, engine.EndInput{})
	require.NoError(t, err)
	clk.t = clk.t.Add(time.Hour)

	_, err = eng.PruneFlow(src.ID, clk.t)
	require.NoError(t, err)
	require.Equal(t, []string{"chain/" + src.ID}, keysUnder(t, st, "chain/"), "the chain keeps its record while a run is left")
	_, err = eng.PruneFlow(succ.ID, clk.t)
	require.NoError(t, err)
	require.Empty(t, keysUnder(t, st, "chain/"))
}

func TestRerunFromAStepOfASucceededFlow(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	done := sdk.Plan{Nodes: []sdk.PlanNode{{ID: "a", Status: sdk.NodeSucceeded}, {ID: "b", Status: sdk.NodeSucceeded}, {ID: "c", Status: sdk.NodeSucceeded}}}
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g", State: planState(t, done)})
	require.NoError(t, err)
	f, err = eng.Finish(f.ID, f.Revision, engine.EndInput{})
	require.NoError(t, err)

	_, _, err = eng.ContinueFlow(f.ID, continueReq(f))
	require.ErrorContains(t, err, "(settled failed)", "a succeeded flow is only rerun from a named step")
	req := continueReq(f)
	req.FromStep = "b"
	succ, created, err := eng.ContinueFlow(f.ID, req)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, "b", succ.Continuation.FromStep)
	require.Equal(t, []string{"a"}, succ.Continuation.Reuse)
	require.Equal(t, []string{"b", "c"}, succ.Continuation.Rerun)
}

// A continuation starts with the chain's usage so far as its usage before
// the run; what it reports itself is its own, and the chain counts both.
func TestContinuationCarriesTheUsageBeforeItsRun(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	src, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "owner-a", ControllerID: "ctl", Goal: "g", State: planState(t, threeSteps)})
	require.NoError(t, err)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: src.ID})
	require.NoError(t, err)
	_, err = eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	first := &sdk.Usage{InputTokens: 100, OutputTokens: 20, TokenReports: 1}
	_, err = eng.RecordProgress(task.ID, engine.ProgressInput{Usage: first})
	require.NoError(t, err)
	_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskFailed, Error: "boom"})
	require.NoError(t, err)
	src, err = eng.GetFlow(src.ID)
	require.NoError(t, err)
	src, err = eng.Fail(src.ID, src.Revision, engine.EndInput{BlockedSummary: "b failed"})
	require.NoError(t, err)

	succ, _, err := eng.ContinueFlow(src.ID, continueReq(src))
	require.NoError(t, err)
	require.Equal(t, first, succ.UsageBeforeRun)
	v, err := eng.ViewFlow(succ.ID)
	require.NoError(t, err)
	require.Nil(t, v.RunUsage, "the continuation has reported nothing of its own")
	require.Equal(t, first, v.ChainState.Usage, "the chain counts the first run's usage")
}

// A source is never pruned while its continuation may still read the
// results it reuses; it goes once the continuation has ended too.
func TestASourceOutlivesItsContinuation(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	src := failedFlow(t, eng, threeSteps, false)
	succ, _, err := eng.ContinueFlow(src.ID, continueReq(src))
	require.NoError(t, err)
	later := time.Now().Add(time.Hour)
	_, err = eng.PruneFlow(src.ID, later)
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "still reuses its results")

	_, err = eng.Finish(succ.ID, succ.Revision, engine.EndInput{})
	require.NoError(t, err)
	_, err = eng.PruneFlow(src.ID, later)
	require.NoError(t, err, "the continuation ended: the source may go")
	_, err = eng.GetFlow(src.ID)
	require.ErrorIs(t, err, sdk.ErrNotFound)
}

func TestContinueFlowRecordsWhoAsked(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	src := failedFlow(t, eng, threeSteps, false)
	req := continueReq(src)
	req.By = "alice"
	succ, _, err := eng.ContinueFlow(src.ID, req)
	require.NoError(t, err)

	req.By = "bob"
	again, created, err := eng.ContinueFlow(src.ID, req)
	require.NoError(t, err, "who asks is not part of the request")
	require.False(t, created)
	require.Equal(t, succ.ID, again.ID)

	_, entries := historyKinds(t, eng, src.ID)
	require.Equal(t, "alice", entryOf(t, entries, engine.HistoryContinued).By)
}
