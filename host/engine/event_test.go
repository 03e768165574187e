package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

func eventTypes(t testing.TB, eng *engine.Engine, flowID string) []sdk.EventType {
	t.Helper()
	evs, err := eng.Events(flowID)
	require.NoError(t, err)
	var out []sdk.EventType
	for i, ev := range evs {
		if i > 0 {
			require.Equal(t, evs[i-1].Seq+1, ev.Seq, "per-flow sequence has no gaps")
		}
		out = append(out, ev.Type)
	}
	return out
}

func TestOutboxRecordsWhatControllersReactTo(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	require.Equal(t, []sdk.EventType{sdk.EventFlowStarted}, eventTypes(t, eng, f.ID))

	f, err := eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{})
	require.NoError(t, err)
	f, err = eng.Resume(f.ID, f.Revision, engine.ResumeInput{Status: sdk.FlowRunning})
	require.NoError(t, err)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID})
	require.NoError(t, err)
	_, err = eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded})
	require.NoError(t, err)
	queued, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID})
	require.NoError(t, err)
	_, err = eng.CancelFlow(f.ID, "")
	require.NoError(t, err)

	require.Equal(t, []sdk.EventType{
		sdk.EventFlowStarted, sdk.EventFlowResumed, sdk.EventTaskFinished,
		sdk.EventFlowCancelRequested, sdk.EventTaskFinished,
	}, eventTypes(t, eng, f.ID), "the cancel request precedes the cancelled child's task.finished")

	evs, err := eng.Events(f.ID)
	require.NoError(t, err)
	require.Equal(t, task.ID, evs[2].TaskID)
	require.JSONEq(t, `{"status":"succeeded","exit_code":null}`, string(evs[2].Data))

	// Acknowledged events go; the sequence keeps counting after them.
	require.NoError(t, eng.AckEvent(f.ID, evs[0].Seq))
	require.NoError(t, eng.AckEvent(f.ID, evs[0].Seq), "a repeated ack is harmless")
	evs, err = eng.Events(f.ID)
	require.NoError(t, err)
	require.Len(t, evs, 4)
	require.Equal(t, int64(2), evs[0].Seq)
	require.Equal(t, queued.ID, evs[3].TaskID)

	// Mirrored flows have no controller, hence no outbox.
	d := detached(t, eng)
	require.Empty(t, eventTypes(t, eng, d.FlowID))
}

func TestRefusedWritesQueueNoEvent(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	_, err := eng.Resume(f.ID, f.Revision+1, engine.ResumeInput{})
	require.ErrorIs(t, err, sdk.ErrRevisionConflict)
	require.Equal(t, []sdk.EventType{sdk.EventFlowStarted}, eventTypes(t, eng, f.ID))
}

// faultStore fails every Put whose key has the given prefix: the one fault
// a real store cannot be made to produce on demand.
type faultStore struct {
	store.Store
	failPrefix string
}

var errInjected = errors.New("injected write failure")

func (s *faultStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(ctx, func(tx store.Tx) error { return fn(faultTx{tx, s.failPrefix}) })
}

type faultTx struct {
	store.Tx
	failPrefix string
}

func (tx faultTx) Put(key string, value []byte) (int64, error) {
	if strings.HasPrefix(key, tx.failPrefix) {
		return 0, errInjected
	}
	return tx.Tx.Put(key, value)
}

func TestEventsAreAtomicWithTheirCause(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	good, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	f := createFlow(t, good)
	task, _, err := good.CreateTask(engine.CreateTaskInput{FlowID: f.ID})
	require.NoError(t, err)
	_, err = good.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)

	bad, err := engine.New(&faultStore{Store: st, failPrefix: "event/"}, engine.Config{})
	require.NoError(t, err)

	_, err = bad.CreateFlow(engine.CreateFlowInput{OwnerKey: "x", ControllerID: "c", Goal: "g"})
	require.ErrorIs(t, err, errInjected)
	page, err := good.ListFlows(engine.FlowFilter{OwnerKey: "x"})
	require.NoError(t, err)
	require.Empty(t, page.Flows, "no flow without its flow.started event")

	_, err = bad.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded})
	require.ErrorIs(t, err, errInjected)
	got, err := good.GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status, "no finished task without its task.finished event")

	cur, err := good.GetFlow(f.ID)
	require.NoError(t, err)
	cur, err = good.SetWaiting(f.ID, cur.Revision, engine.WaitInput{})
	require.NoError(t, err)
	_, err = bad.Resume(f.ID, cur.Revision, engine.ResumeInput{Status: sdk.FlowRunning})
	require.ErrorIs(t, err, errInjected)
	after, err := good.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, cur, after, "no resume without its flow.resumed event")
	require.Equal(t, []sdk.EventType{sdk.EventFlowStarted}, eventTypes(t, good, f.ID))
}

func TestIndexesAreAtomicWithTheirRecord(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	good, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	f := createFlow(t, good)
	bad, err := engine.New(&faultStore{Store: st, failPrefix: "idx/flow/status/"}, engine.Config{})
	require.NoError(t, err)
	_, err = bad.Finish(f.ID, f.Revision, engine.EndInput{})
	require.ErrorIs(t, err, errInjected)

	cur, err := good.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowQueued, cur.Status)
	page, err := good.ListFlows(engine.FlowFilter{Status: sdk.FlowQueued})
	require.NoError(t, err)
	require.Len(t, page.Flows, 1)
}

// A failed delivery waits on the engine's clock, the same clock that
// decides when it is due again, so the two can never disagree.
func TestEventRetryWaitsOnTheEnginesClock(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	eng, err := engine.New(openStore(t), engine.Config{Now: func() time.Time { return at }})
	require.NoError(t, err)
	f := createFlow(t, eng)
	_, err = eng.EventFailed(f.ID, 1, engine.EventFailure{Error: "no answer", RetryAfter: 30 * time.Second, Counted: true})
	require.NoError(t, err)
	evs, err := eng.Events(f.ID)
	require.NoError(t, err)
	require.Equal(t, at.Add(30*time.Second), evs[0].RetryAt)

	due, err := eng.NextDeliveries(0, nil)
	require.NoError(t, err)
	require.Empty(t, due, "not due before its retry time")
	at = at.Add(30 * time.Second)
	due, err = eng.NextDeliveries(0, nil)
	require.NoError(t, err)
	require.Len(t, due, 1, "due once the engine's clock reaches it")
}
