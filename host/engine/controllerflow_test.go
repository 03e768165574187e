package engine_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// A controller's flow is stored with its idempotency key, labels and
// parent, and flow.started, in one transaction; the same key returns it
// unchanged, with nothing more queued; the indexes agree with the
// records; and once the flow is pruned, its key is free again.
func TestCreateControllerFlowKeepsItsKey(t *testing.T) {
	t.Parallel()
	eng, st, c := newClockEngine(t)
	parent := createFlow(t, eng)
	req := sdk.FlowRequest{IdempotencyKey: "a/b c", Goal: "handle it", OwnerKey: "inbox",
		State: json.RawMessage(`{"n":1}`), Labels: map[string]string{"k": "v"}, ParentFlowID: parent.ID}
	f, created, err := eng.CreateControllerFlow("ctl", req)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, []any{"ctl", sdk.SyncManaged, "a/b c", parent.ID, map[string]string{"k": "v"}},
		[]any{f.ControllerID, f.SyncMode, f.IdempotencyKey, f.ParentFlowID, f.Labels})
	again, created, err := eng.CreateControllerFlow("ctl", sdk.FlowRequest{IdempotencyKey: "a/b c", Goal: "other", OwnerKey: "x"})
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, f, again)
	evs, err := eng.Events(f.ID)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, sdk.EventFlowStarted, evs[0].Type)
	problems, err := eng.CheckIndexes()
	require.NoError(t, err)
	require.Empty(t, problems)

	_, err = eng.Finish(f.ID, f.Revision, engine.EndInput{})
	require.NoError(t, err)
	_, err = eng.PruneFlow(f.ID, c.t)
	require.NoError(t, err)
	require.Empty(t, keysUnder(t, st, "idx/flow/idem/"))
	next, created, err := eng.CreateControllerFlow("ctl", req)
	require.NoError(t, err)
	require.True(t, created, "a pruned flow's key is free again")
	require.NotEqual(t, f.ID, next.ID)
}

// Past Config.MaxActiveFlows active flows a controller created, a new one
// is refused with sdk.ErrResourceExhausted naming the cap, and nothing is
// written; ended flows, flows started for it by others and other
// controllers' flows do not count.
func TestCreateControllerFlowCap(t *testing.T) {
	t.Parallel()
	eng, err := engine.New(openStore(t), engine.Config{MaxActiveFlows: 2})
	require.NoError(t, err)
	ended, _, err := eng.CreateControllerFlow("ctl", sdk.FlowRequest{IdempotencyKey: "ended", Goal: "g", OwnerKey: "o"})
	require.NoError(t, err)
	_, err = eng.Fail(ended.ID, ended.Revision, sdk.EndRequest{})
	require.NoError(t, err)
	_, err = eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "other", Goal: "not counted"})
	require.NoError(t, err)
	_, err = eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "started for it, not by it"})
	require.NoError(t, err)
	for _, k := range []string{"one", "two"} {
		_, _, err := eng.CreateControllerFlow("ctl", sdk.FlowRequest{IdempotencyKey: k, Goal: "g", OwnerKey: "o"})
		require.NoError(t, err)
	}
	before := len(allFlows(t, eng))
	_, _, err = eng.CreateControllerFlow("ctl", sdk.FlowRequest{IdempotencyKey: "three", Goal: "g", OwnerKey: "o"})
	require.ErrorIs(t, err, sdk.ErrResourceExhausted)
	require.ErrorContains(t, err, "2 active flows")
	require.ErrorContains(t, err, "max_active_flows")
	require.Len(t, allFlows(t, eng), before, "a refused flow is not written")
	f, created, err := eng.CreateControllerFlow("ctl", sdk.FlowRequest{IdempotencyKey: "one", Goal: "g", OwnerKey: "o"})
	require.NoError(t, err, "a repeated key is answered at the cap")
	require.False(t, created)
	require.Equal(t, "one", f.IdempotencyKey)
}

// A key is required, and bad input is refused naming the field.
func TestCreateControllerFlowRefusesBadInput(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	for want, req := range map[string]sdk.FlowRequest{
		"idempotency key": {Goal: "g", OwnerKey: "o"},
		"goal":            {IdempotencyKey: "k", OwnerKey: "o"},
		"owner":           {IdempotencyKey: "k", Goal: "g"},
		"state":           {IdempotencyKey: "k", Goal: "g", OwnerKey: "o", State: json.RawMessage(`{`)},
	} {
		_, _, err := eng.CreateControllerFlow("ctl", req)
		require.ErrorIs(t, err, sdk.ErrInvalid, want)
		require.ErrorContains(t, err, want)
	}
	require.Empty(t, allFlows(t, eng))
}

// A controller with more active flows than one etcd transaction may
// check keys still creates another: admission reads one range, not every
// flow.
func TestCreateControllerFlowPastTxnOps(t *testing.T) {
	t.Parallel()
	eng, err := engine.New(openStore(t), engine.Config{MaxActiveFlows: 300})
	require.NoError(t, err)
	for i := range 200 {
		_, _, err := eng.CreateControllerFlow("ctl", sdk.FlowRequest{IdempotencyKey: fmt.Sprint("k", i), Goal: "g", OwnerKey: "o"})
		require.NoError(t, err, "flow %d", i)
	}
}

// Calls racing with one key make one flow: every call answers it, and
// exactly one says it created it, also when a write runs again after a
// conflict (etcd).
func TestCreateControllerFlowRace(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	const n = 8
	type answer struct {
		id      string
		created bool
		err     error
	}
	answers := make(chan answer, n)
	for range n {
		go func() {
			f, created, err := eng.CreateControllerFlow("ctl", sdk.FlowRequest{IdempotencyKey: "one", Goal: "g", OwnerKey: "o"})
			if err != nil {
				answers <- answer{err: err}
				return
			}
			answers <- answer{id: f.ID, created: created}
		}()
	}
	ids, created := map[string]bool{}, 0
	for range n {
		a := <-answers
		require.NoError(t, a.err)
		ids[a.id] = true
		if a.created {
			created++
		}
	}
	require.Len(t, ids, 1)
	require.Equal(t, 1, created)
	require.Len(t, allFlows(t, eng), 1)
}
