package cli_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// hookPost is one message a receiver was sent.
type hookPost struct {
	Path, Query, Key string
	Event, Status    string
	FlowID, TaskID   string
	Milestone        string
	// Accepted is whether the receiver answered 2xx; Dup whether it had
	// accepted that key before (a repeat it drops).
	Accepted, Dup bool
}

// hookReceiver is an HTTP server on loopback that records every post and
// dedupes by the Idempotency-Key, as a well-behaved receiver does. It
// answers 503 to the first fails posts of each key.
type hookReceiver struct {
	url   string
	fails int
	mu    sync.Mutex
	posts []hookPost
	tries map[string]int
}

func newHookReceiver(t *testing.T, fails int) *hookReceiver {
	t.Helper()
	r := &hookReceiver{fails: fails, tries: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var n struct {
			Event, Status, Milestone string
			FlowID                   string `json:"flow_id"`
			TaskID                   string `json:"task_id"`
		}
		_ = json.NewDecoder(req.Body).Decode(&n)
		p := hookPost{Path: req.URL.Path, Query: req.URL.RawQuery, Key: req.Header.Get("Idempotency-Key"),
			Event: n.Event, Status: n.Status, FlowID: n.FlowID, TaskID: n.TaskID, Milestone: n.Milestone}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.tries[p.Key]++
		if r.tries[p.Key] <= r.fails {
			r.posts = append(r.posts, p)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		p.Accepted = true
		p.Dup = slices.ContainsFunc(r.posts, func(o hookPost) bool { return o.Key == p.Key && o.Accepted })
		r.posts = append(r.posts, p)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// accepted returns the messages accepted under path, each key once (a
// repeat of an accepted key is dropped, as its receiver would).
func (r *hookReceiver) accepted(path string) []hookPost {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []hookPost
	for _, p := range r.posts {
		if p.Path == path && p.Accepted && !p.Dup {
			out = append(out, p)
		}
	}
	return out
}

// all returns every post received, accepted or not.
func (r *hookReceiver) all() []hookPost {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.posts)
}

// waitFlowEnd waits for flow id to end.
func waitFlowEnd(t *testing.T, home, id string) sdk.Flow {
	t.Helper()
	var f sdk.Flow
	require.Eventually(t, func() bool {
		f = *showFlow(t, home, id).Flow
		return f.Status.Terminal()
	}, 30*time.Second, 50*time.Millisecond, "flow %s did not end", id)
	return f
}

// runDetached runs argv with --detach and extra flags, returning the task.
func runDetached(t *testing.T, home string, flags []string, argv ...string) apitype.Task {
	t.Helper()
	args := append(append([]string{"tasks", "run", "--detach", "--json"}, flags...), "--")
	code, out, errOut := run(t, home, append(args, argv...)...)
	require.Equal(t, 0, code, errOut)
	var task apitype.Task
	require.NoError(t, json.Unmarshal([]byte(out), &task), out)
	return task
}

// pendingNotices opens the store of a home whose gateway is gone (the
// test killed it) and returns the notices still queued.
func pendingNotices(t *testing.T, home string) []engine.Notice {
	t.Helper()
	var due []engine.Notice
	seed(t, home, func(eng *engine.Engine) {
		var err error
		due, err = eng.DueNotices(time.Now().Add(1000*time.Hour), 0)
		require.NoError(t, err)
	})
	return due
}

// postStatuses lists the statuses of posts, in order.
func postStatuses(ps []hookPost) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Event+" "+p.Status)
	}
	return out
}

// TestNotifyPoliciesDeliverEndToEnd: with a gateway process and an HTTP
// receiver on loopback, done_only sends one message when the run ends,
// state_changes one per status change (a detached run's
// queued→running→succeeded, and a pipeline's running→waiting→running at
// its gate), and silent none: once every flow ended and the notice
// outbox is empty, the receiver got nothing for it.
func TestNotifyPoliciesDeliverEndToEnd(t *testing.T) {
	t.Parallel()
	home, dir := shortHome(t), t.TempDir()
	gw := startDaemon(t, home, filepath.Join(dir, "gateway.log"))
	rcv := newHookReceiver(t, 0)
	run1 := func(policy string) apitype.Task {
		return runDetached(t, home, []string{"--notify", policy, "--notify-to", rcv.url + "/" + policy}, "true")
	}
	done, changes, silent := run1("done_only"), run1("state_changes"), run1("silent")

	wf := filepath.Join(dir, "gate.lobster")
	require.NoError(t, os.WriteFile(wf, []byte("name: gated\nsteps:\n  - id: ask\n    approval: go on?\n  - id: b\n    run: echo after\n"), 0o600))
	code, out, errOut := run(t, home, "pipeline", "run", wf, "--detach", "--notify", "state_changes", "--notify-to", rcv.url+"/pipeline")
	require.Equal(t, 0, code, errOut)
	pipelineID := strings.Fields(out)[2] // "Pipeline flow ID started. …"
	require.Eventually(t, func() bool { return showFlow(t, home, pipelineID).Status == sdk.FlowWaiting }, 30*time.Second, 50*time.Millisecond)
	code, _, errOut = run(t, home, "tasks", "flow", "approve", pipelineID)
	require.Equal(t, 0, code, errOut)

	for _, id := range []string{done.FlowID, changes.FlowID, silent.FlowID, pipelineID} {
		require.Equal(t, sdk.FlowSucceeded, waitFlowEnd(t, home, id).Status)
	}
	require.Eventually(t, func() bool {
		return len(rcv.accepted("/done_only")) == 1 && len(rcv.accepted("/state_changes")) == 2 && len(rcv.accepted("/pipeline")) >= 4
	}, 30*time.Second, 50*time.Millisecond, "messages did not arrive: %v", rcv.all())
	require.Equal(t, []string{"flow.finished succeeded"}, postStatuses(rcv.accepted("/done_only")))
	require.Equal(t, []string{"flow.status running", "flow.finished succeeded"}, postStatuses(rcv.accepted("/state_changes")))
	require.Equal(t, []string{"flow.status running", "flow.status waiting", "flow.status running", "flow.finished succeeded"},
		postStatuses(rcv.accepted("/pipeline")), "one per change of the pipeline's status")
	require.Equal(t, done.FlowID, rcv.accepted("/done_only")[0].FlowID)

	gw.kill()
	// The kill may beat the removal of a notice the receiver had just
	// accepted: that entry would be sent again and dropped by its key.
	// Nothing else may be left.
	acceptedKeys := map[string]bool{}
	for _, p := range rcv.all() {
		if p.Accepted {
			acceptedKeys[p.Key] = true
		}
	}
	for _, n := range pendingNotices(t, home) {
		require.True(t, acceptedKeys[n.Key], "notice %s is left in the outbox unsent", n.Key)
	}
	require.Empty(t, rcv.accepted("/silent"), "silent sent nothing")
	for _, p := range rcv.all() {
		require.NotEqual(t, "/silent", p.Path)
	}
}

// TestNotifyRetriesAcrossAKill: a receiver that fails each message twice
// and then accepts it gets each message exactly once by its key, though
// the gateway is SIGKILLed while a message is pending: every try of one
// message carries the same key, and no change gets a second key.
func TestNotifyRetriesAcrossAKill(t *testing.T) {
	t.Parallel()
	home, dir := shortHome(t), t.TempDir()
	log := filepath.Join(dir, "gateway.log")
	writeGatewayConfig(t, home, "")
	gw := startDaemon(t, home, log)
	rcv := newHookReceiver(t, 2)
	task := runDetached(t, home, []string{"--notify", "state_changes", "--notify-to", rcv.url + "/a", "--notify-to", rcv.url + "/b"}, "true")
	waitFlowEnd(t, home, task.FlowID)
	require.Eventually(t, func() bool { return len(rcv.all()) > 0 }, 30*time.Second, 20*time.Millisecond, "no message was tried")
	gw.kill()
	require.NotEmpty(t, pendingNotices(t, home), "a message is pending when the gateway dies")
	startDaemon(t, home, log)

	require.Eventually(t, func() bool {
		return len(rcv.accepted("/a")) == 2 && len(rcv.accepted("/b")) == 2
	}, 90*time.Second, 50*time.Millisecond, "messages were not delivered after the restart: %v", rcv.all())
	for _, path := range []string{"/a", "/b"} {
		require.ElementsMatch(t, []string{"flow.status running", "flow.finished succeeded"}, postStatuses(rcv.accepted(path)),
			"each message is retried on its own, so they may arrive in any order")
	}
	keys := map[string][]string{} // change (path, event, status) → keys it was sent under
	for _, p := range rcv.all() {
		change := p.Path + " " + p.Event + " " + p.Status
		if !slices.Contains(keys[change], p.Key) {
			keys[change] = append(keys[change], p.Key)
		}
		require.True(t, strings.HasPrefix(p.Key, task.FlowID+"/"), p.Key)
	}
	require.Len(t, keys, 4)
	for change, ks := range keys {
		require.Len(t, ks, 1, "every try of %s carries one key", change)
	}
	require.NotEqual(t, keys["/a flow.finished succeeded"], keys["/b flow.finished succeeded"], "each destination has its own key")
	for _, p := range rcv.all() {
		if !p.Accepted {
			continue
		}
		require.GreaterOrEqual(t, countKeyTries(rcv.all(), p.Key), 3, "accepted on the third try or later")
	}
}

// countKeyTries counts the posts of key.
func countKeyTries(ps []hookPost, key string) int {
	n := 0
	for _, p := range ps {
		if p.Key == key {
			n++
		}
	}
	return n
}

// TestMilestoneMessageOncePerRunAndName: tasks run --notify-on-milestone
// sends one message the first time a named milestone is reported; the
// same name reported again, before and after a gateway SIGKILL (read
// from the progress file by the next gateway), sends no second one, and
// a name reported only while no gateway ran is announced by the next.
func TestMilestoneMessageOncePerRunAndName(t *testing.T) {
	t.Parallel()
	home, dir := shortHome(t), t.TempDir()
	log, gate := filepath.Join(dir, "gateway.log"), filepath.Join(dir, "go")
	gw := startDaemon(t, home, log)
	rcv := newHookReceiver(t, 0)
	m := func(name string) string { return `echo '{"milestone":"` + name + `"}' >> "$FLOWGATE_PROGRESS"; ` }
	child := m("built") + m("tested") + m("built") + `while [ ! -f ` + gate + ` ]; do sleep 0.05; done; ` + m("built") + m("deployed")
	task := runDetached(t, home, []string{"--notify-to", rcv.url + "/m", "--notify-on-milestone", "built,deployed"}, "sh", "-c", child)

	milestones := func() []string {
		var out []string
		for _, p := range rcv.accepted("/m") {
			if p.Event == "task.milestone" {
				require.Equal(t, task.ID, p.TaskID)
				out = append(out, p.Milestone)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(milestones()) == 1 }, 30*time.Second, 20*time.Millisecond, "built was not announced")
	require.Eventually(t, func() bool {
		code, out, _ := run(t, home, "tasks", "show", task.ID, "--json")
		var got apitype.Task
		return code == 0 && json.Unmarshal([]byte(out), &got) == nil && len(got.Milestones) == 3
	}, 30*time.Second, 20*time.Millisecond, "the three milestones were not recorded")
	gw.kill()
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	startDaemon(t, home, log)
	waitFlowEnd(t, home, task.FlowID)
	require.Eventually(t, func() bool { return len(rcv.accepted("/m")) == 3 }, 30*time.Second, 20*time.Millisecond,
		"deployed and the end were not announced: %v", rcv.all())
	require.Equal(t, []string{"built", "deployed"}, milestones(), "once per run and name")
	code, out, errOut := run(t, home, "tasks", "show", task.ID, "--json")
	require.Equal(t, 0, code, errOut)
	var got apitype.Task
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got.Milestones, 5, "every report was recorded")
	require.Equal(t, []string{"built", "deployed"}, got.MilestonesNoticed)
}

// writeGatewayConfig writes home's gateway.yaml: a short retry backoff,
// so a test's failed tries come again within a second or two, and more.
func writeGatewayConfig(t *testing.T, home, more string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(home, "gateway.yaml"), []byte("notify_retry:\n  max_backoff: 1s\n"+more), 0o600))
}

// socketGet GETs path from the gateway of home over its API socket.
func socketGet(t *testing.T, home, path string) string {
	t.Helper()
	c := http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", filepath.Join(home, "gateway.sock"))
	}}}
	resp, err := c.Get("http://gateway" + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	return string(b)
}

// TestNotifySecretsAreNeverShownOrStored: a secret in a destination URL,
// given as a ${VAR} ref to the gateway's environment or held by a named
// destination in the gateway config, reaches the receiver and appears
// nowhere else: not in the store file, the gateway log (a failed try
// included), show and history output (text and JSON), nor /metrics.
func TestNotifySecretsAreNeverShownOrStored(t *testing.T) {
	t.Parallel()
	home, dir := shortHome(t), t.TempDir()
	log := filepath.Join(dir, "gateway.log")
	rcv := newHookReceiver(t, 1)
	const envSecret, namedSecret = "env-s3cret-value", "named-s3cret-value"
	writeGatewayConfig(t, home, "notify:\n  ops: "+rcv.url+"/named?token="+namedSecret+"\n")
	startDaemon(t, home, log, "HOOK_TOKEN="+envSecret)
	task := runDetached(t, home, []string{"--notify-to", "ops", "--notify-to", rcv.url + "/env?token=${HOOK_TOKEN}",
		"--notify-on-milestone", "half"}, "sh", "-c", `echo '{"milestone":"half"}' >> "$FLOWGATE_PROGRESS"; exit 3`)
	require.Equal(t, sdk.FlowFailed, waitFlowEnd(t, home, task.FlowID).Status)
	require.Eventually(t, func() bool { return len(rcv.accepted("/named")) == 2 && len(rcv.accepted("/env")) == 2 },
		30*time.Second, 50*time.Millisecond, "messages did not arrive: %v", rcv.all())
	require.Equal(t, "token="+namedSecret, rcv.accepted("/named")[0].Query, "the named destination's secret reached the receiver")
	require.Equal(t, "token="+envSecret, rcv.accepted("/env")[0].Query, "the ref was filled from the gateway's environment")

	shown := map[string]string{"/metrics": socketGet(t, home, "/metrics")}
	for _, args := range [][]string{
		{"tasks", "flow", "show", task.FlowID}, {"tasks", "flow", "show", task.FlowID, "--json"},
		{"tasks", "show", task.ID}, {"tasks", "show", task.ID, "--json"},
		{"tasks", "flow", "history", task.FlowID}, {"tasks", "flow", "history", task.FlowID, "--json"},
		{"tasks", "list", "--json"}, {"tasks", "audit", "--json"},
	} {
		code, out, errOut := run(t, home, args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		shown[strings.Join(args, " ")] = out + errOut
	}
	require.Contains(t, shown["tasks flow show "+task.FlowID], "${HOOK_TOKEN}", "the ref is shown as written")
	db, err := os.ReadFile(filepath.Join(home, "flowgate.db"))
	require.NoError(t, err)
	shown["the store file"] = string(db)
	logged, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Contains(t, string(logged), "will retry", "a failed try was logged")
	shown["the gateway log"] = string(logged)
	for where, text := range shown {
		for _, secret := range []string{envSecret, namedSecret} {
			require.NotContains(t, text, secret, "%s shows a secret", where)
		}
	}
}
