package runcenter_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/runcenter"
	"github.com/flowgate/flowgate/host/trigger"
)

// A delivery to /hooks needs the trigger's token, not a run center
// token: the run center's guard does not stand in front of it. The
// triggers page then lists the trigger with the delivery it accepted,
// escaped.
func TestTriggersPageListsDeliveries(t *testing.T) {
	t.Setenv("FG_TEST_HOOK_TOKEN", "hook-token")
	s := startSite(t, runcenter.Token{Name: "alice", Token: "alice-token"})
	_, err := s.c.AddTrigger(context.Background(), apitype.TriggerInput{Name: "inbox", Controller: "ctl", TokenEnv: "FG_TEST_HOOK_TOKEN"})
	require.NoError(t, err)

	post := func(token string) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodPost, s.base+"/hooks/inbox", strings.NewReader(`{"file":"a"}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Idempotency-Key", "<b>key</b>")
		resp, err := s.hc.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var a trigger.Answer
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
		return resp, a.FlowID
	}
	resp, _ := post("alice-token")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a run center token is not the trigger's")
	resp, flowID := post("hook-token")
	require.Equal(t, http.StatusAccepted, resp.StatusCode)

	resp, _ = s.do(http.MethodGet, "/triggers", "", nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the page itself stays behind the run center's guard")
	body := s.get("/triggers", "alice-token")
	require.Contains(t, body, "inbox")
	require.Contains(t, body, `href="/flows/`+flowID+`"`)
	require.Contains(t, body, "&lt;b&gt;key&lt;/b&gt;", "a delivery id is escaped")
	require.NotContains(t, body, "<b>key")
}
