package runcenter_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/scheduler"
)

// post sends form to path with alice's token and the CSRF token of the
// page at path.
func (s *site) post(path string, form url.Values) (*http.Response, string) {
	s.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", s.csrf(path, alice.Token))
	return s.do(http.MethodPost, path, alice.Token, form)
}

// Run now, disable and enable a cron job from its pages: each behind the
// CSRF check and the token, the run recorded as by the token's name, and
// a refusal (running a disabled job) shown on the page in plain words.
func TestCronJobActions(t *testing.T) {
	t.Parallel()
	s := startSite(t, alice)
	ctx := context.Background()
	job, err := s.c.AddJob(ctx, apitype.CronJobInput{Name: "yearly", Schedule: apitype.ScheduleFlags{Cron: "0 3 1 1 *", TZ: "Europe/Berlin"}, Command: "true"})
	require.NoError(t, err)
	path := "/cron/" + job.ID
	named, err := s.c.AddJob(ctx, apitype.CronJobInput{Name: scriptGoal, Schedule: apitype.ScheduleFlags{Every: "1h"}, Command: "true"})
	require.NoError(t, err)
	escaped := s.get("/cron/"+named.ID+"/run", alice.Token)
	require.NotContains(t, escaped, scriptGoal)
	require.Contains(t, escaped, "Run cron job &lt;script&gt;alert(1)&lt;/script&gt; now?", "a job's name shows as text")
	for _, page := range []string{"/cron", path} {
		body := s.get(page, alice.Token)
		require.Contains(t, body, `href="`+path+`/run">Run now…</a>`, page)
		require.Contains(t, body, `href="`+path+`/disable">Disable…</a>`, page)
	}

	resp, _ := s.do(http.MethodPost, path+"/run", alice.Token, url.Values{"csrf": {"forged"}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	resp, _ = s.do(http.MethodPost, path+"/run", "", url.Values{"csrf": {s.csrf(path+"/run", alice.Token)}})
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	runs, err := s.c.JobRuns(ctx, job.ID, 0)
	require.NoError(t, err)
	require.Empty(t, runs, "a refused post runs nothing")

	resp, body := s.post(path+"/run", url.Values{"by": {"mallory"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	require.Equal(t, path, resp.Header.Get("Location"))
	runs, err = s.c.JobRuns(ctx, job.ID, 0)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	require.Equal(t, scheduler.TriggerManual, runs[0].Trigger)
	require.Equal(t, "alice", runs[0].By, "who ran it is the token's name, never the form's")
	require.Contains(t, s.get(path, alice.Token), `manual <span class="by">by alice</span>`)

	resp, body = s.post(path+"/disable", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	got, err := s.c.GetJob(ctx, job.ID)
	require.NoError(t, err)
	require.False(t, got.Enabled)
	page := s.get(path, alice.Token)
	require.Contains(t, page, `href="`+path+`/enable">Enable…</a>`)
	require.NotContains(t, page, "Run now…", "a disabled job offers no run")

	resp, body = s.post(path+"/run", nil)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, body, "Nothing was done: ")
	require.Contains(t, body, "is disabled")
	runs, err = s.c.JobRuns(ctx, job.ID, 0)
	require.NoError(t, err)
	require.Len(t, runs, 1, "the refused run made nothing")

	resp, body = s.post(path+"/enable", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	got, err = s.c.GetJob(ctx, job.ID)
	require.NoError(t, err)
	require.True(t, got.Enabled)
}

// A backfill's form reads From and To in the job's zone; a bad range is
// refused with what was wrong, in the form's words, and runs nothing; a
// good one runs the times in it, each recorded as by the token's name.
func TestCronBackfillFromThePage(t *testing.T) {
	t.Parallel()
	s := startSite(t, alice)
	ctx := context.Background()
	job, err := s.c.AddJob(ctx, apitype.CronJobInput{Name: "hourly", Schedule: apitype.ScheduleFlags{Cron: "0 * * * *", TZ: "Europe/Berlin", Exact: true},
		Command: "true", Overlap: "allow_all"})
	require.NoError(t, err)
	path := "/cron/" + job.ID + "/backfill"
	confirm := s.get(path, alice.Token)
	require.Contains(t, confirm, "Times are read in Europe/Berlin.")
	require.Contains(t, confirm, `name="from"`)

	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	now := time.Now().In(berlin)
	local := func(t time.Time) string { return t.In(berlin).Format("2006-01-02T15:04") }
	for _, tc := range []struct{ from, to, want string }{
		{"", local(now), "From is empty"},
		{"yesterday", local(now), `From &#34;yesterday&#34; is no date and time`},
		{local(now), local(now.Add(-time.Hour)), "is not after From"},
		{local(now.Add(-time.Hour)), local(now.Add(2 * time.Hour)), "is in the future"},
	} {
		resp, body := s.post(path, url.Values{"from": {tc.from}, "to": {tc.to}})
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%+v", tc)
		require.Contains(t, body, "Nothing was done: ", "%+v", tc)
		require.Contains(t, body, tc.want, "%+v", tc)
	}
	runs, err := s.c.JobRuns(ctx, job.ID, 0)
	require.NoError(t, err)
	require.Empty(t, runs, "a refused backfill runs nothing")

	from := now.Add(-3 * time.Hour).Truncate(time.Hour).Add(time.Minute)
	resp, body := s.post(path, url.Values{"from": {local(from)}, "to": {local(now)}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	runs, err = s.c.JobRuns(ctx, job.ID, 0)
	require.NoError(t, err)
	var backfilled int
	for _, r := range runs {
		if r.Trigger == scheduler.TriggerBackfill {
			backfilled++
			require.Equal(t, "alice", r.By)
		}
	}
	require.Equal(t, 3, backfilled, "the three hours after From ran: %+v", runs)
}

// A trigger is disabled and enabled from the triggers page, behind the
// CSRF check; a trigger that is gone is refused on the page, not with a
// 500.
func TestTriggerEnableDisableFromThePage(t *testing.T) {
	t.Setenv("FG_TEST_HOOK_TOKEN", "hook-token")
	s := startSite(t, alice)
	ctx := context.Background()
	_, err := s.c.AddTrigger(ctx, apitype.TriggerInput{Name: "inbox", Controller: "ctl", TokenEnv: "FG_TEST_HOOK_TOKEN"})
	require.NoError(t, err)
	require.Contains(t, s.get("/triggers", alice.Token), `href="/triggers/inbox/disable">Disable…</a>`)

	resp, _ := s.do(http.MethodPost, "/triggers/inbox/disable", alice.Token, url.Values{"csrf": {"forged"}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	tr, err := s.c.GetTrigger(ctx, "inbox")
	require.NoError(t, err)
	require.True(t, tr.Enabled, "a forged post changes nothing")

	resp, body := s.post("/triggers/inbox/disable", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	require.Equal(t, "/triggers", resp.Header.Get("Location"))
	tr, err = s.c.GetTrigger(ctx, "inbox")
	require.NoError(t, err)
	require.False(t, tr.Enabled)
	require.Contains(t, s.get("/triggers", alice.Token), `href="/triggers/inbox/enable">Enable…</a>`)

	resp, body = s.post("/triggers/inbox/enable", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	tr, err = s.c.GetTrigger(ctx, "inbox")
	require.NoError(t, err)
	require.True(t, tr.Enabled)

	csrf := s.csrf("/triggers", alice.Token)
	resp, body = s.do(http.MethodPost, "/triggers/ghost/enable", alice.Token, url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Contains(t, body, "Nothing was done: ")
}
