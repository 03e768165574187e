package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

func TestHistoryRouteAndRemote(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	ctx := t.Context()
	f, err := g.remote.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g"})
	require.NoError(t, err)
	_, err = g.remote.UpdateFlow(ctx, f.ID, f.Revision, apitype.FlowPatch{Status: sdk.FlowRunning})
	require.NoError(t, err)

	r := do(t, g.sock, http.MethodGet, "/v1/flows/"+f.ID+"/history?after=1&limit=5", "")
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var body struct {
		Entries []map[string]any `json:"entries"`
		Next    int64            `json:"next"`
	}
	require.NoError(t, json.Unmarshal(r.body, &body))
	require.Len(t, body.Entries, 1)
	require.Equal(t, "status", body.Entries[0]["kind"])
	require.Equal(t, "queued → running", body.Entries[0]["summary"])
	require.EqualValues(t, 2, body.Entries[0]["seq"])
	require.Equal(t, int64(2), body.Next)

	page, err := g.remote.History(ctx, f.ID, 0, 0)
	require.NoError(t, err)
	local, err := g.local.History(ctx, f.ID, 0, 0)
	require.NoError(t, err)
	require.Equal(t, local, page, "the Remote reads what the Local reads")

	r = do(t, g.sock, http.MethodGet, "/v1/flows/"+f.ID+"/history?after=x", "")
	require.Equal(t, http.StatusBadRequest, r.status)
	require.Contains(t, errorOf(t, r).Error.Message, `after "x" is not a history seq`)
	_, err = g.remote.History(ctx, "nope", 0, 0)
	require.ErrorIs(t, err, sdk.ErrNotFound)
}

// TestHistoryStreamFollowsUntilTheFlowEnds reads the event stream raw, as
// a browser's EventSource does, while the flow changes, then follows it
// with the Remote.
func TestHistoryStreamFollowsUntilTheFlowEnds(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	ctx := t.Context()
	f, err := g.eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g"})
	require.NoError(t, err)

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://flowgate/v1/flows/"+f.ID+"/history/stream", nil)
	require.NoError(t, err)
	resp, err := rawClient(g.sock).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	lines := bufio.NewScanner(resp.Body)
	next := func() string {
		t.Helper()
		require.True(t, lines.Scan(), "the stream ended early: %v", lines.Err())
		return lines.Text()
	}
	require.Equal(t, "id: 1", next())
	require.Contains(t, next(), `"kind":"flow.created"`)
	require.Empty(t, next())

	// A change made while the stream is open arrives on it.
	f, err = g.eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{Status: sdk.FlowRunning})
	require.NoError(t, err)
	require.Equal(t, "id: 2", next())
	require.Contains(t, next(), `"summary":"queued → running"`)
	require.Empty(t, next())
	_, err = g.eng.Finish(f.ID, f.Revision, engine.EndInput{})
	require.NoError(t, err)
	require.Equal(t, "id: 3", next())
	next()
	next()
	require.Equal(t, "event: end", next())

	var seqs []int64
	require.NoError(t, g.remote.FollowHistory(ctx, f.ID, 1, func(e apitype.HistoryEntry) error {
		seqs = append(seqs, e.Seq)
		return nil
	}), "following an ended flow returns once every entry was passed")
	require.Equal(t, []int64{2, 3}, seqs)

	err = g.remote.FollowHistory(ctx, "nope", 0, func(apitype.HistoryEntry) error { return nil })
	require.ErrorIs(t, err, sdk.ErrNotFound)
	require.True(t, strings.Contains(err.Error(), "nope"))
}

// TestHistoryStreamEndsWhenTheServerShutsDown: an open stream does not
// hold the gateway's Stop (http.Server.Shutdown waits for connections to
// go idle).
func TestHistoryStreamEndsWhenTheServerShutsDown(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	f, err := g.eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g"})
	require.NoError(t, err)
	followed := make(chan error, 1)
	first := make(chan struct{})
	go func() {
		followed <- g.remote.FollowHistory(context.Background(), f.ID, 0, func(apitype.HistoryEntry) error {
			close(first)
			return nil
		})
	}()
	<-first
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, g.srv.Shutdown(ctx), "Shutdown returns once the stream has ended")
	require.Error(t, <-followed, "the follower hears the stream ended before the flow did")
}

// TestHistoryStreamEndsWithItsOwnServer: one handler served by two
// servers, as the gateway serves its socket and its web listener, ends
// the streams of the server that shuts down, whichever served a stream
// first, and keeps the other server's open.
func TestHistoryStreamEndsWithItsOwnServer(t *testing.T) {
	t.Parallel()
	local := newLocal(t)
	h := api.NewHandler(local, hclog.NewNullLogger())
	sockA, _ := serve(t, h)
	sockB, srvB := serve(t, h)
	f, err := local.Engine().CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g"})
	require.NoError(t, err)
	follow := func(sock string) <-chan error {
		remote, err := api.DialRemote(sock)
		require.NoError(t, err)
		t.Cleanup(func() { remote.Close() })
		followed := make(chan error, 1)
		first := make(chan struct{})
		go func() {
			var once sync.Once
			followed <- remote.FollowHistory(t.Context(), f.ID, 0, func(apitype.HistoryEntry) error {
				once.Do(func() { close(first) })
				return nil
			})
		}()
		<-first
		return followed
	}
	onA := follow(sockA)
	onB := follow(sockB)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, srvB.Shutdown(ctx), "B's Shutdown returns once B's stream has ended")
	require.Error(t, <-onB, "B's follower hears its stream ended")

	_, err = local.Engine().UpdateFlow(f.ID, 1, engine.FlowPatch{Status: sdk.FlowSucceeded})
	require.NoError(t, err)
	require.NoError(t, <-onA, "A's stream lives on until the flow ends")
}

// TestLocalFollowHistoryWakesAtTheWrite: a follower woken by the store's
// change feed passes an entry on at its write, not at its backstop timer
// (an hour here).
func TestLocalFollowHistoryWakesAtTheWrite(t *testing.T) {
	t.Parallel()
	var changes api.Broadcast
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{OnCommit: func(time.Duration) { changes.Notify() }})
	require.NoError(t, err)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	local := api.NewLocal(st, eng, t.TempDir(), nil).WakeOn(&changes, time.Hour)
	t.Cleanup(func() { local.Close() })
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g"})
	require.NoError(t, err)

	entries := make(chan apitype.HistoryEntry, 8)
	followed := make(chan error, 1)
	go func() {
		followed <- local.FollowHistory(t.Context(), f.ID, 0, func(e apitype.HistoryEntry) error {
			entries <- e
			return nil
		})
	}()
	next := func(what string) apitype.HistoryEntry {
		t.Helper()
		select {
		case e := <-entries:
			return e
		case <-time.After(30 * time.Second):
			t.Fatalf("%s was not passed on at its write", what)
			return apitype.HistoryEntry{}
		}
	}
	require.EqualValues(t, "flow.created", next("the first entry").Kind)
	_, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{Status: sdk.FlowFailed})
	require.NoError(t, err)
	require.EqualValues(t, "status", next("the failure").Kind)
	require.NoError(t, <-followed, "the follow ends with the flow")
}
