package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/notify/dest/desttest"
	"github.com/flowgate/flowgate/sdk"
)

// TestNotifyDeliveryAcrossKill runs the gateway as its own process with
// a notify: map whose secret comes from its environment. A destination
// that fails twice gets its notice once it accepts, though the gateway
// is SIGKILLed after the first failure: every try carries the same key.
// A destination that never accepts is given up at the bound: the flow's
// history says notify.failed and tasks audit reports notify_failed.
// Neither the gateway's log nor those say the secret.
func TestNotifyDeliveryAcrossKill(t *testing.T) {
	home := shortHome(t)
	log := filepath.Join(t.TempDir(), "gateway.log")
	flaky, down := desttest.NewReceiver(t, 2), desttest.NewReceiver(t, 1000)
	const secret = "e2e-s3cret-token"
	t.Setenv("FG_E2E_HOOK_TOKEN", secret)
	config := "notify:\n" +
		"  flaky: \"" + flaky.URL + "/hook?token=${FG_E2E_HOOK_TOKEN}\"\n" +
		"  down: \"" + down.URL + "/hook?token=${FG_E2E_HOOK_TOKEN}\"\n" +
		"notify_retry: {attempts: 3, max_backoff: 1s}\n" +
		"http: {public_url: \"https://flowgate.example.com\"}\n"
	require.NoError(t, os.WriteFile(filepath.Join(home, "gateway.yaml"), []byte(config), 0o600))
	var flowID string
	seed(t, home, func(eng *engine.Engine) {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Label: "nightly backup", Spec: sdk.TaskSpec{Shell: "true"}})
		require.NoError(t, err)
		flowID = task.FlowID
		for _, d := range []string{"flaky", "down"} {
			require.NoError(t, eng.QueueNotice(engine.Notice{Key: flowID + "/queued/" + d, FlowID: flowID, Event: "flow.status", Status: "queued", Dest: d}))
		}
	})

	gw := startDaemon(t, home, log)
	require.Eventually(t, func() bool { return len(flaky.Posts()) >= 1 }, 20*time.Second, 20*time.Millisecond, "the first try never came")
	gw.kill()
	startDaemon(t, home, log)
	logHas := func(s string) func() bool {
		return func() bool { b, _ := os.ReadFile(log); return strings.Contains(string(b), s) }
	}
	require.Eventually(t, logHas("notice delivered"), 30*time.Second, 20*time.Millisecond, "the flaky destination never got the notice")
	posts := flaky.Posts()
	require.Len(t, posts, 3, "two failures, then the one that took it")
	for _, p := range posts {
		require.Equal(t, flowID+"/queued/flaky", p.Key)
		require.Equal(t, "token="+secret, p.Query)
	}
	require.Contains(t, posts[2].Body, `"url":"https://flowgate.example.com/flows/`+flowID+`"`)

	require.Eventually(t, logHas("notice given up"), 30*time.Second, 20*time.Millisecond, "the down destination was never given up")
	code, out, errOut := run(t, home, "tasks", "audit", "--json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"code": "notify_failed"`)
	code, hist, errOut := run(t, home, "tasks", "flow", "history", flowID)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, hist, "gave up sending flow.status to down after 3 attempts")

	b, err := os.ReadFile(log)
	require.NoError(t, err)
	for _, s := range []string{string(b), out, hist} {
		require.NotContains(t, s, secret)
		require.NotContains(t, s, down.URL+"/hook")
	}
}
