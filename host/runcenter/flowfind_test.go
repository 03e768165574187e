package runcenter_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runcenter"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/trigger"
	"github.com/flowgate/flowgate/sdk"
)

// rowName is the readable name that starts a row of the flow list.
var rowName = regexp.MustCompile(`<tr><td><a href="/flows/[^"]+">([^<]*)</a>`)

// names lists the row names of the flow list at path, top to bottom.
func names(s *site, path string) []string {
	s.t.Helper()
	out := []string{}
	for _, m := range rowName.FindAllStringSubmatch(s.get(path, ""), -1) {
		out = append(out, m[1])
	}
	return out
}

// findSite is a run center whose flows were started by a cron job (three
// runs), a trigger, a controller that labelled its flow, and by hand.
type findSite struct {
	*site
	job     apitype.CronJob
	byHand  *sdk.Flow
	cronIDs []string
}

func startFindSite(t *testing.T) findSite {
	t.Helper()
	s := startSeeded(t, func(eng *engine.Engine) {
		_, _, err := eng.CreateControllerFlow("ctl", sdk.FlowRequest{OwnerKey: "inbox", Goal: "file a.txt", IdempotencyKey: "a",
			Labels: map[string]string{"source": "Mailbox"}})
		require.NoError(t, err)
	})
	ctx := context.Background()
	job, err := s.c.AddJob(ctx, apitype.CronJobInput{Name: "nightly", Schedule: apitype.ScheduleFlags{Every: "24h"}, Command: "true"})
	require.NoError(t, err)
	fs := findSite{site: s, job: job}
	create := func(owner, goal string) *sdk.Flow {
		f, err := s.c.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: owner, ControllerID: "ctl", Goal: goal, AllowUnknownController: true})
		require.NoError(t, err)
		return f
	}
	for range 3 {
		fs.cronIDs = append(fs.cronIDs, create(scheduler.JobOwnerKey(job.ID), "nightly").ID)
	}
	create(trigger.OwnerKey("deploy"), "trigger deploy")
	fs.byHand = create("me", "Weekly Report")
	return fs
}

// Each row shows the flow's name and its creation time, with the id
// small beside them and still a link; what started it links to the cron
// job or the trigger's flows.
func TestFlowListShowsReadableNames(t *testing.T) {
	t.Parallel()
	s := startFindSite(t)
	body := s.get("/", "")
	require.Equal(t, []string{"Weekly Report", "trigger deploy", "nightly", "file a.txt"}, names(s.site, "/"))
	require.Contains(t, body, `<a href="/flows/`+s.byHand.ID+`" class="fid"><code>`+s.byHand.ID+`</code></a>`)
	require.Regexp(t, `Weekly Report</a>\s*<span class="sub"><time datetime=`, body)
	require.Contains(t, body, `cron job <a href="/cron/`+s.job.ID+`">nightly</a>`)
	require.Contains(t, body, `trigger <a href="/?trigger=deploy">deploy</a>`)
}

// Each filter of the form selects the flows it names; the search ignores
// case and finds goals, owners and labels.
func TestFlowListFilters(t *testing.T) {
	t.Parallel()
	s := startFindSite(t)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"search=weekly", []string{"Weekly Report"}},
		{"search=REPORT", []string{"Weekly Report"}},
		{"search=mailbox", []string{"file a.txt"}},
		{"search=deploy", []string{"trigger deploy"}},
		{"search=no+such+flow", []string{}},
		{"cron=nightly", []string{"nightly", "nightly", "nightly"}},
		{"cron=" + s.job.ID, []string{"nightly", "nightly", "nightly"}},
		{"trigger=deploy", []string{"trigger deploy"}},
		{"chain=" + s.byHand.ID, []string{"Weekly Report"}},
		{"status=queued&search=file", []string{"file a.txt"}},
		{"status=succeeded", []string{}},
		{"since=2000-01-01T00:00&search=weekly", []string{"Weekly Report"}},
		{"until=2000-01-01T00:00", []string{}},
		{"since=2999-01-01", []string{}},
		{"since=2000-01-01T00:00:00Z&until=2999-01-01T00:00:00Z&trigger=deploy", []string{"trigger deploy"}},
	} {
		require.Equal(t, tc.want, names(s.site, "/?"+tc.query), tc.query)
	}
	body := s.get("/?search=weekly&cron=nightly", "")
	require.Contains(t, body, `value="weekly"`, "the form keeps what was typed")
	require.Contains(t, body, "No flows match the filter.")

	for _, tc := range []struct {
		query, says string
		status      int
	}{
		{"since=yesterday", `since &#34;yesterday&#34; is not a time`, http.StatusBadRequest},
		{"since=2026-03-02&until=2026-03-01", "give a since before the until", http.StatusBadRequest},
		{"cron=ghost", `cron job &#34;ghost&#34;`, http.StatusNotFound},
		{"cron=nightly&trigger=deploy", "give one of owner, cron job and trigger", http.StatusBadRequest},
	} {
		resp, body := s.do(http.MethodGet, "/?"+tc.query, "", nil)
		require.Equal(t, tc.status, resp.StatusCode, tc.query)
		require.Contains(t, body, tc.says, tc.query)
	}
}

// The runs of one cron job fold into the row of its newest run, which
// counts them and lists the others; the toggle shows every run, and the
// job's own list is never folded.
func TestFlowListFoldsCronRunsByJob(t *testing.T) {
	t.Parallel()
	s := startFindSite(t)
	body := s.get("/", "")
	require.Equal(t, []string{"Weekly Report", "trigger deploy", "nightly", "file a.txt"}, names(s.site, "/"))
	require.Contains(t, body, "3 runs of this job on this page")
	for _, id := range s.cronIDs[:2] {
		require.Contains(t, body, `<li><a href="/flows/`+id+`">`, "an older run is listed under its job's row")
	}
	require.Contains(t, body, `<a href="/?cron=`+s.job.ID+`">All runs of this job →</a>`)
	require.Contains(t, body, `<a href="/?runs=all" id="runs-toggle">Show every cron run</a>`)

	every := s.get("/?runs=all", "")
	require.Equal(t, []string{"Weekly Report", "trigger deploy", "nightly", "nightly", "nightly", "file a.txt"}, names(s.site, "/?runs=all"))
	require.NotContains(t, every, "runs of this job on this page")
	require.Contains(t, every, `<a href="/" id="runs-toggle">Fold cron runs by job</a>`)
	require.Contains(t, every, `<input type="hidden" name="runs" value="all">`, "filtering keeps every run shown")

	job := s.get("/?cron="+url.QueryEscape(s.job.ID), "")
	require.NotContains(t, job, "runs-toggle", "one job's runs are never folded")
}

// A search that matches few flows reads at most Config.FlowScan flows a
// page: the page ends early, says so, and "Search older" goes on from
// where it stopped to the match further back.
func TestFlowListSearchIsBoundedPerPage(t *testing.T) {
	t.Parallel()
	const scan = 20
	var needle string
	s := startSeeded(t, func(eng *engine.Engine) {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "the needle"})
		require.NoError(t, err)
		needle = f.ID
		fill(t, eng, scan+5, 1)
	})
	rc, err := runcenter.New(runcenter.Config{Client: s.c, Home: s.home, FlowScan: scan})
	require.NoError(t, err)
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	s.base = srv.URL

	body := s.get("/?search=needle", "")
	require.Empty(t, flowRow.FindAllString(body, -1))
	require.Contains(t, body, "No flows match the filter among the 20 flows this page looked at.")
	require.Contains(t, body, `id="bounded"`)
	m := regexp.MustCompile(`<a href="(/\?[^"]*)" rel="next">Search older →`).FindStringSubmatch(body)
	require.NotNil(t, m, "the page offers to search older flows")
	next := strings.ReplaceAll(m[1], "&amp;", "&")
	require.Contains(t, next, "search=needle")
	body = s.get(next, "")
	rows := flowRow.FindAllStringSubmatch(body, -1)
	require.Len(t, rows, 1)
	require.Equal(t, needle, rows[0][1])
	require.NotContains(t, body, `rel="next"`, "nothing older is left")
}
