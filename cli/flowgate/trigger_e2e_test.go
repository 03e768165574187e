package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/trigger"
	"github.com/flowgate/flowgate/sdk"
)

// TestTriggerStartsAPipelineOnce runs a real gateway with its HTTP
// listener and a trigger on a workflow with an approval gate. Unsigned
// and wrongly signed deliveries get 401 and start nothing; one delivery
// sent three times starts one flow (202, then 200 with the same id); that
// flow parks at its gate, is approved through the run center's form, and
// runs its last step with the delivery's args. /metrics counts each
// outcome, and a disabled trigger takes nothing.
func TestTriggerStartsAPipelineOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with a real gateway binary")
	}
	bin := buildFlowgate(t)
	home, work, logf := e2eDirs(t)
	done := filepath.Join(work, "done")
	wf := filepath.Join(work, "deploy.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: deploy
args:
  ref: {}
steps:
  - id: ask
    approval: Deploy it?
  - id: deploy
    run: echo "$LOBSTER_ARG_REF" > `+done+`
`), 0o600))
	const secret = "hook-secret"
	g := startGatewayEnv(t, bin, home, logf, append(os.Environ(), "HOOK_SECRET="+secret), "--http", "127.0.0.1:0")
	defer g.reap()
	fg := func(args ...string) string { return flowgate(t, bin, append([]string{"--home", home}, args...)...) }
	fg("triggers", "add", "deploy", "--pipeline", wf, "--secret-env", "HOOK_SECRET")
	require.Contains(t, fg("triggers", "list"), "deploy")

	c, err := api.DialRemote(gateway.SocketPath(home))
	require.NoError(t, err)
	defer c.Close()
	ctx := context.Background()
	st, err := c.Status(ctx)
	require.NoError(t, err)
	base := "http://" + st.HTTPAddr
	post := func(body []byte, headers map[string]string) (int, trigger.Answer) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+"/hooks/deploy", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var a trigger.Answer
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
		return resp.StatusCode, a
	}
	flows := func() []apitype.FlowView {
		page, err := c.ViewFlows(ctx, apitype.FlowFilter{OwnerKey: trigger.OwnerKey("deploy")})
		require.NoError(t, err)
		return page.Flows
	}

	body := []byte(`{"ref":"v1.2.3"}`)
	code, _ := post(body, map[string]string{"X-GitHub-Delivery": "d-1"})
	require.Equal(t, http.StatusUnauthorized, code, "unsigned")
	code, _ = post(body, map[string]string{"X-GitHub-Delivery": "d-1", trigger.SignatureHeader: trigger.Sign("not-the-secret", body)})
	require.Equal(t, http.StatusUnauthorized, code, "wrong signature")
	require.Empty(t, flows(), "a refused delivery starts nothing")

	signed := map[string]string{"X-GitHub-Delivery": "d-1", trigger.SignatureHeader: trigger.Sign(secret, body)}
	code, first := post(body, signed)
	require.Equal(t, http.StatusAccepted, code)
	require.NotEmpty(t, first.FlowID)
	for range 2 {
		code, again := post(body, signed)
		require.Equal(t, http.StatusOK, code, "a repeated delivery")
		require.Equal(t, first.FlowID, again.FlowID)
	}
	require.Len(t, flows(), 1, "three deliveries of one id, one flow")
	var runs struct{ Runs []apitype.TriggerRun }
	require.NoError(t, json.Unmarshal([]byte(fg("triggers", "runs", "deploy", "--json")), &runs))
	require.Len(t, runs.Runs, 1)
	require.Equal(t, first.FlowID, runs.Runs[0].FlowID)

	// The flow parks at its gate; the run center's form approves it.
	var rev int64
	polltest.Until(t, "", func() (bool, string) {
		v, err := c.ViewFlow(ctx, first.FlowID)
		require.NoError(t, err)
		rev = v.Revision
		return v.Status == sdk.FlowWaiting, "flow is " + string(v.Status)
	}, polltest.Within(60*time.Second), polltest.Every(50*time.Millisecond))
	resp, err := http.Get(base + "/gates")
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	require.NotNil(t, m, "the gates page has a form: %s", page)
	require.Contains(t, string(page), first.FlowID)
	form := url.Values{"csrf": {string(m[1])}, "flow": {first.FlowID}, "kind": {sdk.GateApproval}, "decision": {"approve"},
		"revision": {strconv.FormatInt(rev, 10)}, "back": {"/gates"}}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = noRedirect.PostForm(base+"/gates/decide", form)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	polltest.Until(t, "", func() (bool, string) {
		v, err := c.ViewFlow(ctx, first.FlowID)
		require.NoError(t, err)
		return v.Status == sdk.FlowSucceeded, "flow is " + string(v.Status)
	}, polltest.Within(60*time.Second), polltest.Every(50*time.Millisecond))
	out, err := os.ReadFile(done)
	require.NoError(t, err)
	require.Equal(t, "v1.2.3\n", string(out), "the delivery's body was the run's args")

	resp, err = http.Get(base + "/metrics")
	require.NoError(t, err)
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for outcome, n := range map[string]int{"accepted": 1, "duplicate": 2, "unauthorized": 2} {
		require.Contains(t, string(metrics), fmt.Sprintf(`flowgate_trigger_deliveries_total{outcome=%q,trigger="deploy"} %d`, outcome, n))
	}

	fg("triggers", "disable", "deploy")
	next := []byte(`{"ref":"v2"}`)
	code, _ = post(next, map[string]string{trigger.SignatureHeader: trigger.Sign(secret, next)})
	require.Equal(t, http.StatusNotFound, code, "a disabled trigger takes nothing")
	require.Regexp(t, `enabled:\s+false`, fg("triggers", "show", "deploy"))
	fg("triggers", "remove", "deploy")
	require.Contains(t, fg("triggers", "list"), "Triggers: 0")
}
