package engine_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// openStore opens a real bbolt store in a temporary directory, or, in
// TestMain's second run, an etcd store on a prefix of its own.
func openStore(t testing.TB) store.Store {
	t.Helper()
	if etcdServer != nil {
		t.Cleanup(func() {
			if t.Failed() {
				t.Log("this run of the test was on etcd")
			}
		})
		return etcdServer.Open(t)
	}
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

func newEngine(t testing.TB) *engine.Engine {
	t.Helper()
	eng, err := engine.New(openStore(t), engine.Config{})
	require.NoError(t, err)
	return eng
}

// countingEngine returns an engine over a bbolt file of its own, which
// only a bbolt pass runs, and the count of its store's commits so far.
func countingEngine(t *testing.T) (*engine.Engine, *atomic.Int64) {
	t.Helper()
	bboltOnly(t)
	commits := new(atomic.Int64)
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{OnCommit: func(time.Duration) { commits.Add(1) }})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	return eng, commits
}

func createFlow(t testing.TB, eng *engine.Engine) *sdk.Flow {
	t.Helper()
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "owner-a", ControllerID: "ctl", Goal: "test goal"})
	require.NoError(t, err)
	return f
}

func allFlows(t testing.TB, eng *engine.Engine) []*sdk.Flow {
	t.Helper()
	page, err := eng.ListFlows(engine.FlowFilter{})
	require.NoError(t, err)
	return page.Flows
}

func TestCreateFlowValidation(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	cases := map[string]engine.CreateFlowInput{
		"no owner":      {ControllerID: "c", Goal: "g"},
		"no goal":       {OwnerKey: "o", ControllerID: "c"},
		"no controller": {OwnerKey: "o", Goal: "g"},
		"blank owner":   {OwnerKey: "  ", ControllerID: "c", Goal: "g"},
		"bad state":     {OwnerKey: "o", ControllerID: "c", Goal: "g", State: json.RawMessage(`{bad`)},
		"mirrored":      {SyncMode: sdk.SyncTaskMirrored, OwnerKey: "o", ControllerID: "c", Goal: "g"},
		"bad notify":    {OwnerKey: "o", ControllerID: "c", Goal: "g", NotifyPolicy: "loud"},
		"huge owner":    {OwnerKey: strings.Repeat("o", 40000), ControllerID: "c", Goal: "g"},
	}
	for name, in := range cases {
		_, err := eng.CreateFlow(in)
		require.ErrorIs(t, err, sdk.ErrInvalid, name)
	}
	require.Empty(t, allFlows(t, eng), "a refused create writes nothing")
}

func TestCreateFlowDefaults(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	require.Equal(t, sdk.SyncManaged, f.SyncMode)
	require.Equal(t, sdk.FlowQueued, f.Status)
	require.Equal(t, int64(1), f.Revision)
	require.Equal(t, "done_only", f.NotifyPolicy)
	require.Len(t, f.ID, 36)

	got, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, f, got)

	_, err = eng.GetFlow("nope")
	require.ErrorIs(t, err, sdk.ErrNotFound)
}

func TestStateNullDistinctFromAbsent(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	absent := createFlow(t, eng)
	null, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g", State: json.RawMessage("null")})
	require.NoError(t, err)

	got, err := eng.GetFlow(absent.ID)
	require.NoError(t, err)
	require.Nil(t, got.State)
	got, err = eng.GetFlow(null.ID)
	require.NoError(t, err)
	require.Equal(t, json.RawMessage("null"), got.State)

	b, err := json.Marshal(got)
	require.NoError(t, err)
	require.Contains(t, string(b), `"state":null`)
}

func TestUpdateBumpsRevisionAndRefusesStale(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)

	up, err := eng.UpdateFlow(f.ID, 1, engine.FlowPatch{State: json.RawMessage(`{"n":1}`)})
	require.NoError(t, err)
	require.Equal(t, int64(2), up.Revision)

	_, err = eng.UpdateFlow(f.ID, 1, engine.FlowPatch{State: json.RawMessage(`{"n":99}`)})
	require.ErrorIs(t, err, sdk.ErrRevisionConflict)
	var rc *sdk.RevisionConflictError
	require.True(t, errors.As(err, &rc))
	require.Equal(t, int64(1), rc.Expected)
	require.Equal(t, int64(2), rc.Current.Revision)
	require.JSONEq(t, `{"n":1}`, string(rc.Current.State))

	got, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, up, got, "a stale write changes nothing")
}

func TestTransitionsAreGuarded(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)

	f, err := eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{Wait: json.RawMessage(`{"kind":"approval","prompt":"ok?"}`)})
	require.NoError(t, err)
	require.Equal(t, sdk.FlowWaiting, f.Status)

	f, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{BlockedSummary: "needs disk"})
	require.NoError(t, err)
	require.Equal(t, sdk.FlowBlocked, f.Status)
	require.Equal(t, "needs disk", f.BlockedSummary)

	f, err = eng.Resume(f.ID, f.Revision, engine.ResumeInput{Status: sdk.FlowRunning})
	require.NoError(t, err)
	require.Equal(t, sdk.FlowRunning, f.Status)
	require.Empty(t, f.BlockedSummary)
	require.Equal(t, json.RawMessage("null"), f.Wait)

	_, err = eng.Resume(f.ID, f.Revision, engine.ResumeInput{Status: sdk.FlowWaiting})
	require.ErrorIs(t, err, sdk.ErrInvalid)

	f, err = eng.Finish(f.ID, f.Revision, engine.EndInput{State: json.RawMessage(`"done"`)})
	require.NoError(t, err)
	require.Equal(t, sdk.FlowSucceeded, f.Status)
	require.False(t, f.EndedAt.IsZero())

	rev := f.Revision
	_, err = eng.Resume(f.ID, rev, engine.ResumeInput{})
	require.ErrorIs(t, err, sdk.ErrTerminal)
	_, err = eng.Fail(f.ID, rev, engine.EndInput{})
	require.ErrorIs(t, err, sdk.ErrTerminal)
	_, err = eng.SetWaiting(f.ID, rev, engine.WaitInput{})
	require.ErrorIs(t, err, sdk.ErrTerminal)
	_, err = eng.UpdateFlow(f.ID, rev, engine.FlowPatch{Status: sdk.FlowRunning})
	require.ErrorIs(t, err, sdk.ErrTerminal)
	_, err = eng.CancelFlow(f.ID, "")
	require.ErrorIs(t, err, sdk.ErrTerminal)

	got, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Equal(t, rev, got.Revision, "refused moves write nothing")

	_, err = eng.UpdateFlow(f.ID, rev, engine.FlowPatch{Status: sdk.FlowCancelled})
	require.ErrorIs(t, err, sdk.ErrInvalid, "cancelled is reached only through cancel")
}

func TestFailKeepsBlockedFields(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	f, err := eng.Fail(f.ID, f.Revision, engine.EndInput{BlockedTaskID: "t1", BlockedSummary: "disk full"})
	require.NoError(t, err)
	require.Equal(t, sdk.FlowFailed, f.Status)
	require.Equal(t, "t1", f.BlockedTaskID)
	require.Equal(t, "disk full", f.BlockedSummary)
}

func TestListFlowsFiltersAndPages(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, createFlow(t, eng).ID)
	}
	other, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "owner/b", ControllerID: "other", Goal: "g"})
	require.NoError(t, err)
	_, err = eng.Finish(other.ID, other.Revision, engine.EndInput{})
	require.NoError(t, err)

	all := allFlows(t, eng)
	require.Len(t, all, 6)
	require.Equal(t, other.ID, all[0].ID, "newest first")
	require.Equal(t, ids[0], all[5].ID)

	page, err := eng.ListFlows(engine.FlowFilter{Limit: 2})
	require.NoError(t, err)
	require.Len(t, page.Flows, 2)
	var seen []string
	for {
		for _, f := range page.Flows {
			seen = append(seen, f.ID)
		}
		if page.Next == "" {
			break
		}
		page, err = eng.ListFlows(engine.FlowFilter{Limit: 2, After: page.Next})
		require.NoError(t, err)
	}
	require.Len(t, seen, 6)
	for i := range all {
		require.Equal(t, all[i].ID, seen[i])
	}

	for filter, want := range map[string]engine.FlowFilter{
		"succeeded": {Status: sdk.FlowSucceeded},
		"owner":     {OwnerKey: "owner/b"},
		"ctl":       {ControllerID: "other"},
	} {
		page, err := eng.ListFlows(want)
		require.NoError(t, err, filter)
		require.Len(t, page.Flows, 1, filter)
		require.Equal(t, other.ID, page.Flows[0].ID, filter)
	}
	page, err = eng.ListFlows(engine.FlowFilter{Status: sdk.FlowQueued})
	require.NoError(t, err)
	require.Len(t, page.Flows, 5, "the old status index entry is gone after a move")

	_, err = eng.ListFlows(engine.FlowFilter{Status: "bogus"})
	require.ErrorIs(t, err, sdk.ErrInvalid)

	counts, err := eng.CountFlows()
	require.NoError(t, err)
	require.Equal(t, 6, counts.Total)
	require.Equal(t, 5, counts.ByStatus[sdk.FlowQueued])

	byOwner, err := eng.ResolveFlow("owner/b")
	require.NoError(t, err)
	require.Equal(t, other.ID, byOwner.ID)
	newest, err := eng.ResolveFlow("owner-a")
	require.NoError(t, err)
	require.Equal(t, ids[4], newest.ID, "an owner key resolves to its newest flow")
}

// FlowRevision finds what ResolveFlow finds, by id or owner key, and
// moves with every write of the flow, without decoding its record.
func TestFlowRevisionIsResolveFlowsRevision(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	for _, token := range []string{f.ID, "owner-a", " owner-a "} {
		rev, err := eng.FlowRevision(token)
		require.NoError(t, err, token)
		require.Equal(t, f.Revision, rev, token)
	}
	f, err := eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{CurrentStep: new("next")})
	require.NoError(t, err)
	rev, err := eng.FlowRevision("owner-a")
	require.NoError(t, err)
	require.Equal(t, f.Revision, rev)
	require.Greater(t, rev, int64(1))

	_, err = eng.FlowRevision("nobody")
	require.ErrorIs(t, err, sdk.ErrNotFound)
	_, err = eng.FlowRevision("  ")
	require.ErrorIs(t, err, sdk.ErrInvalid)
}

func TestResumeStartsAQueuedFlowWithoutAnEvent(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	f := createFlow(t, eng)
	f, err := eng.Resume(f.ID, f.Revision, engine.ResumeInput{Status: sdk.FlowRunning})
	require.NoError(t, err)
	require.Equal(t, sdk.FlowRunning, f.Status)
	evs, err := eng.Events(f.ID)
	require.NoError(t, err)
	require.Len(t, evs, 1, "only flow.started: nothing was waiting to be resumed")
}

// Setting a waiting flow running through UpdateFlow (the CLI's and API's
// flow update) records what Resume records: the wait is cleared and the
// controller is told.
func TestUpdateToRunningResumesAParkedFlow(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	for _, park := range []engine.WaitInput{{Wait: json.RawMessage(`{"kind":"approval"}`)}, {BlockedSummary: "needs disk"}} {
		f := createFlow(t, eng)
		f, err := eng.SetWaiting(f.ID, f.Revision, park)
		require.NoError(t, err)
		viaUpdate, err := eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{Status: sdk.FlowRunning})
		require.NoError(t, err)

		g := createFlow(t, eng)
		g, err = eng.SetWaiting(g.ID, g.Revision, park)
		require.NoError(t, err)
		viaResume, err := eng.Resume(g.ID, g.Revision, engine.ResumeInput{Status: sdk.FlowRunning})
		require.NoError(t, err)

		require.JSONEq(t, `null`, string(viaUpdate.Wait), "the stale wait is cleared")
		require.Equal(t, viaResume.Wait, viaUpdate.Wait)
		require.Equal(t, viaResume.BlockedSummary, viaUpdate.BlockedSummary)
		require.Equal(t, viaResume.Status, viaUpdate.Status)
		require.Equal(t, eventTypes(t, eng, viaResume.ID), eventTypes(t, eng, viaUpdate.ID), "the controller hears the same")
		require.Contains(t, eventTypes(t, eng, viaUpdate.ID), sdk.EventFlowResumed)
	}
}
