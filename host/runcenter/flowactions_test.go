package runcenter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runcenter"
	"github.com/flowgate/flowgate/sdk"
)

var alice = runcenter.Token{Name: "alice", Token: "alice-token"}

// failedPlan is a managed flow's state whose plan ran a, failed at b and
// never reached c.
var failedPlan = json.RawMessage(`{"plan":{"nodes":[{"id":"a","status":"succeeded"},{"id":"b","depends_on":["a"],"status":"failed"},{"id":"c","depends_on":["b"]}]}}`)

// actionSite is a site with a failed managed flow with a plan, and a
// failed single run (a mirrored flow).
func actionSite(t *testing.T) (s *site, managed, mirrored *sdk.Flow) {
	t.Helper()
	s = startSeeded(t, func(eng *engine.Engine) {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "web", ControllerID: "ctl", Goal: "three steps", State: failedPlan})
		require.NoError(t, err)
		managed, err = eng.Fail(f.ID, f.Revision, engine.EndInput{BlockedSummary: "b failed"})
		require.NoError(t, err)
		task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "web", Label: "flaky", Spec: sdk.TaskSpec{Argv: []string{"false"}}})
		require.NoError(t, err)
		_, err = eng.StartTask(task.ID, engine.StartInput{})
		require.NoError(t, err)
		_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskFailed, Error: "exit 1"})
		require.NoError(t, err)
		mirrored, err = eng.GetFlow(task.FlowID)
		require.NoError(t, err)
	}, alice)
	return s, managed, mirrored
}

// lastEntry is the newest history entry of flow id.
func (s *site) lastEntry(id string) apitype.HistoryEntry {
	s.t.Helper()
	h, err := s.c.History(context.Background(), id, 0, 0)
	require.NoError(s.t, err)
	return h.Entries[len(h.Entries)-1]
}

// Every flow action is a POST behind the CSRF check and the token: a
// forged or missing CSRF token gets 403, no token 401, and nothing
// changes. A GET only asks.
func TestFlowActionsNeedTheTokenAndCSRF(t *testing.T) {
	t.Parallel()
	s, managed, mirrored := actionSite(t)
	posts := map[string]url.Values{
		"/flows/" + managed.ID + "/continue": {"revision": {strconv.FormatInt(managed.Revision, 10)}, "reason": {"r"}},
		"/flows/" + mirrored.ID + "/retry":   {"revision": {strconv.FormatInt(mirrored.Revision, 10)}},
	}
	for path, form := range posts {
		for _, csrf := range []string{"", "forged"} {
			if csrf != "" {
				form.Set("csrf", csrf)
			}
			resp, body := s.do(http.MethodPost, path, alice.Token, form)
			require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s with csrf %q: %s", path, csrf, body)
		}
		form.Set("csrf", s.csrf(path, alice.Token))
		resp, _ := s.do(http.MethodPost, path, "", form)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, path)
		resp, _ = s.do(http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, path)
	}
	for _, f := range []*sdk.Flow{managed, mirrored} {
		v, err := s.c.ViewFlow(context.Background(), f.ID)
		require.NoError(t, err)
		require.Equal(t, f.Revision, v.Revision, "nothing changed")
		require.Empty(t, v.ContinuedBy)
	}
}

// A failed managed flow offers Continue and Rerun, not Retry; its
// confirmation page carries the revision read, and sending it makes the
// successor, recorded in the source's history as by the token's name,
// and shows the successor's page. The source then offers neither.
func TestContinueFromThePage(t *testing.T) {
	t.Parallel()
	s, managed, _ := actionSite(t)
	page := s.get(runcenter.FlowPath(managed.ID), alice.Token)
	require.Contains(t, page, `href="/flows/`+managed.ID+`/continue">Continue…</a>`)
	require.Contains(t, page, `href="/flows/`+managed.ID+`/rerun">Rerun from a step…</a>`)
	require.NotContains(t, page, "/retry")
	require.NotContains(t, page, "/cancel", "an ended flow has nothing to cancel")

	confirm := s.get("/flows/"+managed.ID+"/continue", alice.Token)
	require.Contains(t, confirm, `action="/flows/`+managed.ID+`/continue"`)
	require.Contains(t, confirm, `name="revision" value="`+strconv.FormatInt(managed.Revision, 10)+`"`)
	require.NotContains(t, confirm, "from_step", "a plain continuation picks no step")

	form := url.Values{"csrf": {s.csrf("/flows/"+managed.ID+"/continue", alice.Token)},
		"revision": {strconv.FormatInt(managed.Revision, 10)}, "reason": {"b hit a flaky network"}, "by": {"mallory"}}
	resp, body := s.do(http.MethodPost, "/flows/"+managed.ID+"/continue", alice.Token, form)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	v, err := s.c.ViewFlow(context.Background(), managed.ID)
	require.NoError(t, err)
	require.NotEmpty(t, v.ContinuedBy)
	require.Equal(t, runcenter.FlowPath(v.ContinuedBy), resp.Header.Get("Location"), "the successor's page")
	last := s.lastEntry(managed.ID)
	require.Equal(t, apitype.HistoryContinued, last.Kind)
	require.Equal(t, "alice", last.By, "who continued is the token's name, never the form's")

	page = s.get(runcenter.FlowPath(managed.ID), alice.Token)
	require.NotContains(t, page, "Continue…", "a chain has one continuation")

	// Another request is refused on the page in plain words, with the
	// form kept, and makes nothing.
	form.Set("reason", "something else")
	resp, body = s.do(http.MethodPost, "/flows/"+managed.ID+"/continue", alice.Token, form)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "Nothing was done: ")
	require.Contains(t, body, "already has its continuation")
	require.Contains(t, body, ">something else</textarea>")
	succ, err := s.c.ViewFlow(context.Background(), v.ContinuedBy)
	require.NoError(t, err)
	require.Equal(t, "b hit a flaky network", succ.Continuation.Reason)
}

// Rerun lists the plan's steps, the failed one chosen, and reruns from
// the step picked.
func TestRerunFromAChosenStep(t *testing.T) {
	t.Parallel()
	s, managed, _ := actionSite(t)
	confirm := s.get("/flows/"+managed.ID+"/rerun", alice.Token)
	require.Contains(t, confirm, `<option value="a">a</option>`)
	require.Contains(t, confirm, `<option value="b" selected>b</option>`, "the failed step is chosen first")
	require.Contains(t, confirm, `<option value="c">c</option>`)

	form := url.Values{"csrf": {s.csrf("/flows/"+managed.ID+"/rerun", alice.Token)},
		"revision": {strconv.FormatInt(managed.Revision, 10)}, "reason": {"redo all"}, "from_step": {"a"}}
	resp, body := s.do(http.MethodPost, "/flows/"+managed.ID+"/continue", alice.Token, form)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	id := strings.TrimPrefix(resp.Header.Get("Location"), "/flows/")
	succ, err := s.c.ViewFlow(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, "a", succ.Continuation.FromStep)
	require.Equal(t, []string{"a", "b", "c"}, succ.Continuation.Rerun)
	require.Equal(t, "alice", s.lastEntry(managed.ID).By)
}

// A failed single run offers Retry; a retry sent with a revision the flow
// has left is refused on the page (409, what the flow is now), and one
// with the revision read runs, recorded as by the token's name. The
// engine's refusal of a continuation of a mirrored flow is shown the same
// way, never as a 500.
func TestRetryFromThePage(t *testing.T) {
	t.Parallel()
	s, _, mirrored := actionSite(t)
	page := s.get(runcenter.FlowPath(mirrored.ID), alice.Token)
	require.Contains(t, page, `href="/flows/`+mirrored.ID+`/retry">Retry…</a>`)
	require.NotContains(t, page, "Continue…")

	path := "/flows/" + mirrored.ID + "/retry"
	csrf := s.csrf(path, alice.Token)
	resp, body := s.do(http.MethodPost, path, alice.Token, url.Values{"csrf": {csrf}, "revision": {strconv.FormatInt(mirrored.Revision-1, 10)}})
	require.Equal(t, http.StatusConflict, resp.StatusCode)
	require.Contains(t, body, "the flow changed since this page was drawn (it is now failed, at revision "+strconv.FormatInt(mirrored.Revision, 10))
	tasks, err := s.c.ListTasks(context.Background(), apitype.TaskFilter{FlowID: mirrored.ID})
	require.NoError(t, err)
	require.Len(t, tasks.Tasks, 1, "a refused retry makes no task")

	resp, body = s.do(http.MethodPost, path, alice.Token, url.Values{"csrf": {csrf}, "revision": {strconv.FormatInt(mirrored.Revision, 10)}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	require.Equal(t, runcenter.FlowPath(mirrored.ID), resp.Header.Get("Location"))
	h, err := s.c.History(context.Background(), mirrored.ID, 0, 0)
	require.NoError(t, err)
	var retry *apitype.HistoryEntry
	for i := range h.Entries {
		if h.Entries[i].Kind == apitype.HistoryRetry {
			retry = &h.Entries[i]
		}
	}
	require.NotNil(t, retry)
	require.Equal(t, "alice", retry.By)

	resp, body = s.do(http.MethodPost, "/flows/"+mirrored.ID+"/continue", alice.Token,
		url.Values{"csrf": {csrf}, "revision": {"1"}, "reason": {"r"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "only a managed flow")

	resp, body = s.do(http.MethodPost, path, alice.Token, url.Values{"csrf": {csrf}, "revision": {"x"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, `the form&#39;s revision &#34;x&#34; is not a flow revision; reload the page`)
}

// Cancel asks first: the flow's button is a link to a page whose form
// posts the cancel; opening it changes nothing.
func TestCancelAsksFirst(t *testing.T) {
	t.Parallel()
	s := startSite(t, alice)
	f := s.gatedFlow("g")
	page := s.get(runcenter.FlowPath(f.ID), alice.Token)
	require.Contains(t, page, `href="/flows/`+f.ID+`/cancel">Cancel flow…</a>`)
	confirm := s.get("/flows/"+f.ID+"/cancel", alice.Token)
	require.Contains(t, confirm, `<form method="post" action="/flows/`+f.ID+`/cancel"`)
	v, err := s.c.ViewFlow(context.Background(), f.ID)
	require.NoError(t, err)
	require.False(t, v.CancelRequested(), "asking changes nothing")
	resp, body := s.do(http.MethodPost, "/flows/"+f.ID+"/cancel", alice.Token, url.Values{"csrf": {s.csrf("/flows/"+f.ID+"/cancel", alice.Token)}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	require.Equal(t, "alice", s.lastEntry(f.ID).By)
}
