package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// parkAtGate creates a flow with an object state and parks it at a gate
// of kind at step "review", with wait fields of its controller's own.
func parkAtGate(t *testing.T, eng *engine.Engine, kind string) *sdk.Flow {
	t.Helper()
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "pipeline", Goal: "g", State: json.RawMessage(`{"file":"/w.lobster","decisions":{"draft":{"approved":true,"by":"bo"}}}`)})
	require.NoError(t, err)
	wait := `{"kind":"` + kind + `","step":"review","prompt":"Publish?","resume_token":"tok","approval_id":"abcd1234","schema":{"type":"object"}}`
	f, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{Wait: json.RawMessage(wait)})
	require.NoError(t, err)
	return f
}

func approve(flow string, yes bool, by string) engine.GateDecision {
	return engine.GateDecision{Flow: flow, Kind: sdk.GateApproval, Decision: sdk.Decision{Approved: &yes, By: by}}
}

func TestDecideGateRecordsOnceAndResumesWithTheDecision(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	eng, err := engine.New(openStore(t), engine.Config{Now: func() time.Time { return at }})
	require.NoError(t, err)
	f := parkAtGate(t, eng, sdk.GateApproval)

	got, err := eng.DecideGate(approve(f.ID, true, " ana "))
	require.NoError(t, err)
	require.Equal(t, sdk.FlowRunning, got.Status)
	require.Equal(t, f.Revision+1, got.Revision)
	require.JSONEq(t, `{"file":"/w.lobster","decisions":{"draft":{"approved":true,"by":"bo"}}}`, string(got.State),
		"the controller's state is left alone")
	require.JSONEq(t, `{"review":{"approved":true,"by":"ana","at":"2026-03-04T05:06:07Z"}}`, jsonText(t, got.Decisions),
		"the decision is recorded in the flow, by step")

	evs, err := eng.Events(f.ID)
	require.NoError(t, err)
	last := evs[len(evs)-1]
	require.Equal(t, sdk.EventFlowResumed, last.Type)
	require.JSONEq(t, `{"status":"running","step":"review","decision":{"approved":true,"by":"ana","at":"2026-03-04T05:06:07Z"}}`, string(last.Data))

	_, err = eng.DecideGate(approve(f.ID, false, "bo"))
	require.ErrorIs(t, err, sdk.ErrInvalid, "a gate is decided once")
	require.ErrorContains(t, err, "flow "+f.ID+" is running and waits at no gate; list open gates with flowgate approvals")
}

func TestDecideGateRefusals(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	yes := true
	stale := int64(0)
	cases := []struct {
		name  string
		setup func(f *sdk.Flow) engine.GateDecision
		is    error
		msg   string
	}{
		{"other kind", func(f *sdk.Flow) engine.GateDecision {
			return engine.GateDecision{Flow: f.ID, Kind: sdk.GateInput, Decision: sdk.Decision{Response: json.RawMessage(`{"x":1}`)}}
		}, sdk.ErrInvalid, "waits at an approval gate (step review), not an input gate"},
		{"stale revision", func(f *sdk.Flow) engine.GateDecision {
			d := approve(f.ID, true, "ana")
			d.Expected = &stale
			return d
		}, sdk.ErrRevisionConflict, "expected revision 0, current revision is 2"},
		{"no approved", func(f *sdk.Flow) engine.GateDecision {
			return engine.GateDecision{Flow: f.ID, Kind: sdk.GateApproval}
		}, sdk.ErrInvalid, "answered with approved true or false"},
		{"bad response", func(f *sdk.Flow) engine.GateDecision {
			return engine.GateDecision{Flow: f.ID, Kind: sdk.GateInput, Decision: sdk.Decision{Response: json.RawMessage(`{bad`)}}
		}, sdk.ErrInvalid, "not valid JSON"},
		{"unknown kind", func(f *sdk.Flow) engine.GateDecision {
			return engine.GateDecision{Flow: f.ID, Kind: "signal", Decision: sdk.Decision{Approved: &yes}}
		}, sdk.ErrInvalid, `gate kind "signal"`},
		{"missing flow", func(*sdk.Flow) engine.GateDecision { return approve("nope", true, "") }, sdk.ErrNotFound, `no flow has id or owner key "nope"`},
		{"not waiting", func(*sdk.Flow) engine.GateDecision {
			return approve(createFlow(t, eng).ID, true, "")
		}, sdk.ErrInvalid, "is queued and waits at no gate"},
		{"no step", func(*sdk.Flow) engine.GateDecision {
			f := createFlow(t, eng)
			_, err := eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{Wait: json.RawMessage(`{"kind":"approval"}`)})
			require.NoError(t, err)
			return approve(f.ID, true, "")
		}, sdk.ErrInvalid, "waits at no gate"},

		{"cancel requested", func(f *sdk.Flow) engine.GateDecision {
			// An active task keeps the flow from becoming cancelled at once.
			task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID})
			require.NoError(t, err)
			_, err = eng.StartTask(task.ID, engine.StartInput{})
			require.NoError(t, err)
			_, err = eng.RequestCancel(f.ID, f.Revision)
			require.NoError(t, err)
			return approve(f.ID, true, "")
		}, sdk.ErrCancelRequested, "has a cancel request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := parkAtGate(t, eng, sdk.GateApproval)
			in := c.setup(f)
			before, err := eng.Events(f.ID)
			require.NoError(t, err)
			_, err = eng.DecideGate(in)
			require.ErrorIs(t, err, c.is)
			require.ErrorContains(t, err, c.msg)
			after, err := eng.GetFlow(f.ID)
			require.NoError(t, err)
			require.Equal(t, sdk.FlowWaiting, after.Status, "a refusal changes nothing")
			evs, err := eng.Events(f.ID)
			require.NoError(t, err)
			require.Len(t, evs, len(before), "a refusal queues no event")
		})
	}
}

// An approval the gate's approver rules do not accept is refused at
// once, saying who may approve: the flow stays waiting at the gate,
// unchanged, no event is queued, and the history keeps the refused
// answer. The approver the rules name is then accepted.
func TestDecideGateRefusesAWrongApprover(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "pipeline", Goal: "g", State: json.RawMessage(`{}`)})
	require.NoError(t, err)
	wait := `{"kind":"approval","step":"ship","approval_id":"ab12cd34","initiated_by":"bob","required_approver":"alice","require_different_approver":true}`
	f, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{Wait: json.RawMessage(wait)})
	require.NoError(t, err)
	for _, c := range []struct{ by, msg string }{
		{"bob", "Workflow step ship approval requires approver 'alice', got 'bob'"},
		{" ", "Workflow step ship approval requires approver identity; decide with --by NAME"},
	} {
		_, err := eng.DecideGate(approve(f.ID, true, c.by))
		require.ErrorIs(t, err, sdk.ErrInvalid)
		require.ErrorContains(t, err, c.msg)
		require.ErrorContains(t, err, "the gate stays open: approve as that person with flowgate tasks flow approve ab12cd34 --by NAME")
		after, err := eng.GetFlow(f.ID)
		require.NoError(t, err)
		require.Equal(t, f.Revision, after.Revision, "a refusal changes nothing")
		require.Equal(t, sdk.FlowWaiting, after.Status)
		require.Empty(t, after.Decisions)
	}
	h, err := eng.History(f.ID, 0, 0)
	require.NoError(t, err)
	refused := 0
	for _, e := range h.Entries {
		if e.Kind == engine.HistoryGateRefused {
			refused++
		}
	}
	require.Equal(t, 2, refused, "the history keeps each refused answer")

	got, err := eng.DecideGate(approve(f.ID, false, "bob"))
	require.NoError(t, err, "a denial is never checked")
	require.Equal(t, sdk.FlowRunning, got.Status)
}

func TestDecideGateAgainAfterTheControllerRefusedTheDecision(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	parkAtGate(t, eng, sdk.GateInput)
	answer := engine.GateDecision{Flow: "o", Kind: sdk.GateInput, Decision: sdk.Decision{Response: json.RawMessage(`{"n":1}`), By: "ana"}}
	f, err := eng.DecideGate(answer)
	require.NoError(t, err, "an owner key names the flow too")

	// The controller rejects the response and parks the flow at the same
	// gate with an error: it may be answered anew, once.
	_, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{Wait: json.RawMessage(`{"kind":"input","step":"review","error":"n must be 2"}`)})
	require.NoError(t, err)
	answer.Decision.Response = json.RawMessage(`{"n":2}`)
	f, err = eng.DecideGate(answer)
	require.NoError(t, err)
	require.JSONEq(t, `{"n":2}`, string(f.Decisions["review"].Response))

	f, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{Wait: json.RawMessage(`{"kind":"input","step":"review"}`)})
	require.NoError(t, err)
	_, err = eng.DecideGate(answer)
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.ErrorContains(t, err, "the gate at step review of flow "+f.ID+" was already decided by ana at ")
}

func TestOpenGatesListsAndFinds(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	approval := parkAtGate(t, eng, sdk.GateApproval)
	input := parkAtGate(t, eng, sdk.GateInput)
	other := createFlow(t, eng)
	_, err := eng.SetWaiting(other.ID, other.Revision, engine.WaitInput{Wait: json.RawMessage(`{"kind":"timer"}`)})
	require.NoError(t, err)

	all, err := eng.OpenGates(engine.GateFilter{})
	require.NoError(t, err)
	require.Len(t, all, 2, "a timer is no gate")
	require.Equal(t, input.ID, all[0].FlowID, "newest first")
	require.Equal(t, approval.Revision, all[1].Revision)
	require.JSONEq(t, string(approval.Wait), string(all[1].Gate), "the wait as the controller wrote it")
	require.Equal(t, "Publish?", all[1].Wait().Prompt)

	for _, f := range []engine.GateFilter{{ID: approval.ID}, {Token: "tok", ControllerID: "pipeline"}, {ID: "abcd1234"}} {
		got, err := eng.OpenGates(f)
		require.NoError(t, err)
		require.NotEmpty(t, got, "%+v", f)
	}
	none, err := eng.OpenGates(engine.GateFilter{Token: "other"})
	require.NoError(t, err)
	require.NotNil(t, none)
	require.Empty(t, none)
	none, err = eng.OpenGates(engine.GateFilter{ControllerID: "ctl"})
	require.NoError(t, err)
	require.Empty(t, none)
}

// TestExpireGatesDeniesOnlyGatesPastTheirDeadline parks three flows: one
// gate due, one not yet, one with no deadline. ExpireGates denies the
// first as gate-expired, whatever its kind, and leaves the others; a
// second call finds nothing to do.
func TestExpireGatesDeniesOnlyGatesPastTheirDeadline(t *testing.T) {
	t.Parallel()
	eng, _, c := newClockEngine(t)
	park := func(kind, until string) *sdk.Flow {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "pipeline", Goal: "g", State: json.RawMessage(`{}`)})
		require.NoError(t, err)
		wait := `{"kind":"` + kind + `","step":"review","resume_token":"tok-` + f.ID + `"` + until + `}`
		f, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{Wait: json.RawMessage(wait)})
		require.NoError(t, err)
		return f
	}
	due := park(sdk.GateInput, `,"until":"2026-05-01T12:30:00Z"`)
	later := park(sdk.GateApproval, `,"until":"2026-05-01T14:00:00Z"`)
	never := park(sdk.GateApproval, ``)

	got, err := eng.ExpireGates()
	require.NoError(t, err)
	require.Empty(t, got, "no deadline has passed yet")

	c.t = c.t.Add(time.Hour)
	got, err = eng.ExpireGates()
	require.NoError(t, err)
	require.Equal(t, []string{due.ID}, got)
	f, err := eng.GetFlow(due.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowRunning, f.Status)
	require.JSONEq(t, `{"review":{"approved":false,"by":"flowgate","reason":"gate-expired","at":"2026-05-01T13:00:00Z"}}`, jsonText(t, f.Decisions))
	require.JSONEq(t, `{}`, string(f.State), "the controller's state is left alone")
	evs, err := eng.Events(due.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.EventFlowResumed, evs[len(evs)-1].Type, "the controller hears of the denial")
	for _, id := range []string{later.ID, never.ID} {
		f, err := eng.GetFlow(id)
		require.NoError(t, err)
		require.Equal(t, sdk.FlowWaiting, f.Status)
	}

	got, err = eng.ExpireGates()
	require.NoError(t, err)
	require.Empty(t, got, "an expired gate is denied once")
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
