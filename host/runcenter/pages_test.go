package runcenter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runcenter"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/sdk"
)

var (
	flowRow   = regexp.MustCompile(`<tr><td><a href="/flows/([^"]+)">`)
	olderLink = regexp.MustCompile(`<a href="(/\?[^"]*)" rel="next">Older`)
)

// The flow list shows PageSize flows at a time, newest first, and pages
// on through every flow exactly once; the status filter and the pressure
// line come from the store.
func TestFlowListPagesThroughEveryFlow(t *testing.T) {
	t.Parallel()
	s := startSite(t)
	const n = 2*runcenter.PageSize + 7
	created := map[string]bool{}
	for range n {
		f, err := s.c.CreateFlow(context.Background(), apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g", AllowUnknownController: true})
		require.NoError(t, err)
		created[f.ID] = true
	}
	gated := s.gatedFlow("gated")
	seen := map[string]bool{}
	pages := 0
	for next := "/"; next != ""; pages++ {
		body := s.get(next, "")
		rows := flowRow.FindAllStringSubmatch(body, -1)
		require.LessOrEqual(t, len(rows), runcenter.PageSize)
		for _, r := range rows {
			require.False(t, seen[r[1]], "flow %s is on one page only", r[1])
			seen[r[1]] = true
		}
		next = ""
		if m := olderLink.FindStringSubmatch(body); m != nil {
			next = strings.ReplaceAll(m[1], "&amp;", "&")
		}
		if pages == 0 {
			require.True(t, strings.Contains(body, "107 active · 1 waiting · 0 blocked · 0 cancel-requested · 108 total"), "the pressure line")
			require.NotContains(t, body, "Newest", "the first page links to no newer one")
		}
	}
	require.Equal(t, 3, pages)
	require.Len(t, seen, n+1)

	body := s.get("/?status=waiting", "")
	rows := flowRow.FindAllStringSubmatch(body, -1)
	require.Len(t, rows, 1)
	require.Equal(t, gated.ID, rows[0][1])
	require.Contains(t, body, `<option selected>waiting</option>`)

	resp, body := s.do(http.MethodGet, "/?status=bogus", "", nil)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "bogus")
}

// /pulse sends the page at once, and again when it changed: a new flow
// shows on an open flow list without a reload.
func TestPulseSendsThePageWhenItChanges(t *testing.T) {
	t.Parallel()
	s := startSite(t)
	pulseShowsNewFlow(t, s, s.base)
}

// pulseShowsNewFlow follows the flow list of the run center at base on
// /pulse, and requires a flow created meanwhile through s to show within
// 30 s.
func pulseShowsNewFlow(t *testing.T, s *site, base string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/pulse?page=/", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Contains(t, readEvent(t, resp), "No flows")
	f, err := s.c.CreateFlow(context.Background(), apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "fresh", AllowUnknownController: true})
	require.NoError(t, err)
	require.Contains(t, readEvent(t, resp), f.ID)
}

// /pulse renders the page again at a write the client reports, not on
// its timer (an hour here).
func TestPulseWakesAtTheWrite(t *testing.T) {
	t.Parallel()
	s := startSite(t)
	rc, err := runcenter.New(runcenter.Config{Client: s.c, Home: s.home, Pulse: time.Hour})
	require.NoError(t, err)
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	pulseShowsNewFlow(t, s, srv.URL)
}

// A task's log is shown a page of 64 KiB at a time, with links to the
// pages before and after.
func TestLogsPage(t *testing.T) {
	t.Parallel()
	var flowID, taskID string
	s := startSeeded(t, func(eng *engine.Engine) {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
		require.NoError(t, err)
		task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Label: "writer"})
		require.NoError(t, err)
		_, err = eng.StartTask(task.ID, engine.StartInput{})
		require.NoError(t, err)
		flowID, taskID = f.ID, task.ID
	})
	dir := runner.LogDir(s.home, taskID, 1)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	log := strings.Repeat("a", 64<<10) + "<b>second page</b>"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stdout"), []byte(log), 0o600))

	first := s.get("/flows/"+flowID+"/logs", "")
	require.Contains(t, first, "bytes 0–65536 of 65554")
	require.NotContains(t, first, "second page")
	require.Contains(t, first, "offset=65536")
	second := s.get("/flows/"+flowID+"/logs?task="+taskID+"&stream=stdout&attempt=1&offset=65536", "")
	require.Contains(t, second, "&lt;b&gt;second page&lt;/b&gt;", "log lines are text")
	require.Contains(t, second, "offset=0", "a link back")
	require.NotContains(t, second, "Later")

	for _, q := range []string{"?task=nope", "?stream=both", "?attempt=9", "?offset=-1"} {
		resp, _ := s.do(http.MethodGet, "/flows/"+flowID+"/logs"+q, "", nil)
		require.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, resp.StatusCode, q)
	}

	// The raw chunk the logs page of another gateway asks for.
	resp, raw := s.do(http.MethodGet, "/tasks/"+taskID+"/log?offset=65536", "", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, raw)
	require.Equal(t, "<b>second page</b>", raw)
	require.Equal(t, "65554", resp.Header.Get(runcenter.LogSizeHeader))
	for _, q := range []string{"?stream=both", "?attempt=9", "?offset=-1"} {
		resp, _ := s.do(http.MethodGet, "/tasks/"+taskID+"/log"+q, "", nil)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, q)
	}
}

// The gate forms answer as the CLI does, through DecideGate: an input
// with its JSON response, a denial, each by the token's name; a response
// that is not JSON is refused and an answer to a gate that moved on
// (a stale revision) is refused as a conflict, and neither changes the
// flow.
func TestGateFormsAnswerThroughTheAPI(t *testing.T) {
	t.Parallel()
	s := startSite(t, runcenter.Token{Name: "alice", Token: "alice-token"})
	input, approval := s.gateOf("asks", sdk.GateInput), s.gatedFlow("approves")
	csrf := s.csrf("/gates", "alice-token")
	form := func(f *sdk.Flow, kind, decision, response string, revision int64) url.Values {
		return url.Values{"csrf": {csrf}, "flow": {f.ID}, "kind": {kind}, "decision": {decision}, "response": {response},
			"revision": {strconv.FormatInt(revision, 10)}, "back": {"/flows/" + f.ID}}
	}
	for _, bad := range []struct {
		form url.Values
		code int
	}{
		{form(input, sdk.GateInput, "input", "not json", input.Revision), http.StatusBadRequest},
		{form(input, sdk.GateInput, "input", `"yes"`, input.Revision-1), http.StatusConflict},
		{form(input, sdk.GateInput, "maybe", `"yes"`, input.Revision), http.StatusBadRequest},
	} {
		resp, body := s.do(http.MethodPost, "/gates/decide", "alice-token", bad.form)
		require.Equal(t, bad.code, resp.StatusCode, body)
		require.Contains(t, body, `class="problem"`, "the error page says what was wrong")
	}
	resp, body := s.do(http.MethodPost, "/gates/decide", "alice-token", form(input, sdk.GateInput, "input", `"yes"`, input.Revision))
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	require.Equal(t, "/flows/"+input.ID, resp.Header.Get("Location"))
	resp, body = s.do(http.MethodPost, "/gates/decide", "alice-token", form(approval, sdk.GateApproval, "deny", "", approval.Revision))
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)

	for f, want := range map[*sdk.Flow]string{input: `"yes"`, approval: ""} {
		hist, err := s.c.History(context.Background(), f.ID, 0, 0)
		require.NoError(t, err)
		answers := 0
		for _, e := range hist.Entries {
			if e.Kind != apitype.HistoryGateAnswered {
				continue
			}
			answers++
			require.Equal(t, "alice", e.By)
			var data struct{ Decision sdk.Decision }
			require.NoError(t, json.Unmarshal(e.Data, &data))
			if want != "" {
				require.JSONEq(t, want, string(data.Decision.Response))
			} else {
				require.False(t, *data.Decision.Approved, "denied")
			}
		}
		require.Equal(t, 1, answers, "one answer, none from the refused forms")
	}
}

// The cron page lists a job with its next three runs, and the job's page
// its runs; the audit and plugin pages answer.
func TestCronAuditAndPluginPages(t *testing.T) {
	t.Parallel()
	s := startSite(t)
	job, err := s.c.AddJob(context.Background(), apitype.CronJobInput{Name: "nightly <b>", Schedule: apitype.ScheduleFlags{Every: "1h"}, Command: "echo hi"})
	require.NoError(t, err)
	body := s.get("/cron", "")
	require.Contains(t, body, "nightly &lt;b&gt;")
	next := job.State.NextRun
	for i := range 3 {
		require.Contains(t, body, next.Add(time.Duration(i)*time.Hour).UTC().Format("2006-01-02 15:04:05Z"), "next run %d", i+1)
	}
	require.Contains(t, s.get("/cron/"+job.ID, ""), "No runs yet.")
	resp, _ := s.do(http.MethodGet, "/cron/nope", "", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Contains(t, s.get("/audit", ""), "findings")
	require.Contains(t, s.get("/plugins", ""), "<h1>Plugins</h1>")
}
