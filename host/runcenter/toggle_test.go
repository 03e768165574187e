package runcenter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
)

// remote dials the site's gateway socket, as the CLI does: what it reads
// is what cron show --json and triggers show --json print.
func (s *site) remote() api.Client {
	s.t.Helper()
	c, err := api.DialRemote(gateway.SocketPath(s.home))
	require.NoError(s.t, err)
	s.t.Cleanup(func() { c.Close() })
	return c
}

// lastToggle is the last_toggle field of a cron job's or trigger's JSON.
func lastToggle(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var rec struct {
		LastToggle map[string]any `json:"last_toggle"`
	}
	require.NoError(t, json.Unmarshal(b, &rec))
	return rec.LastToggle
}

// A cron job disabled, then enabled, from the run center keeps the
// token's name as who did it: on the job's page, on the cron page, and
// in the record the CLI reads over the socket.
func TestCronJobToggleSaysWho(t *testing.T) {
	t.Parallel()
	s := startSite(t, alice)
	ctx := context.Background()
	job, err := s.c.AddJob(ctx, apitype.CronJobInput{Name: "weekly", Schedule: apitype.ScheduleFlags{Cron: "0 3 * * 1"}, Command: "true"})
	require.NoError(t, err)
	path := "/cron/" + job.ID
	require.NotContains(t, s.get(path, alice.Token), "disabled by", "a new job names nobody")

	resp, body := s.post(path+"/disable", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	require.Contains(t, s.get(path, alice.Token), "disabled by alice at <time datetime=")
	require.Contains(t, s.get("/cron", alice.Token), "disabled by alice at <time datetime=")
	got, err := s.remote().GetJob(ctx, job.ID)
	require.NoError(t, err)
	require.False(t, got.Enabled)
	rec := lastToggle(t, got)
	require.Equal(t, false, rec["enabled"])
	require.Equal(t, "alice", rec["by"])
	require.NotEmpty(t, rec["at"])

	resp, body = s.post(path+"/enable", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	require.Contains(t, s.get(path, alice.Token), "enabled by alice at <time datetime=")
	got, err = s.remote().GetJob(ctx, job.ID)
	require.NoError(t, err)
	require.Equal(t, true, lastToggle(t, got)["enabled"])
}

// A trigger disabled from the run center keeps the token's name as who
// did it, on the triggers page and in its record.
func TestTriggerToggleSaysWho(t *testing.T) {
	t.Setenv("FG_TEST_HOOK_TOKEN", "hook-token")
	s := startSite(t, alice)
	ctx := context.Background()
	_, err := s.c.AddTrigger(ctx, apitype.TriggerInput{Name: "inbox", Controller: "ctl", TokenEnv: "FG_TEST_HOOK_TOKEN"})
	require.NoError(t, err)
	require.NotContains(t, s.get("/triggers", alice.Token), "disabled by")

	resp, body := s.post("/triggers/inbox/disable", nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	require.Contains(t, s.get("/triggers", alice.Token), "disabled by alice at <time datetime=")
	got, err := s.remote().GetTrigger(ctx, "inbox")
	require.NoError(t, err)
	require.False(t, got.Enabled)
	rec := lastToggle(t, got)
	require.Equal(t, false, rec["enabled"])
	require.Equal(t, "alice", rec["by"])
}
