package trigger_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/trigger"
)

const secret = "s3cret"

// env is a trigger's variables as the gateway's environment holds them.
var env = map[string]string{"HOOK_SECRET": secret, "HOOK_TOKEN": "tok"}

type rig struct {
	eng      *engine.Engine
	ts       *trigger.Triggers
	srv      *httptest.Server
	outcomes []string
}

func newRig(t *testing.T) *rig {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	r := &rig{eng: eng, ts: trigger.New(eng, nil)}
	h := trigger.NewHooks(trigger.HooksConfig{Triggers: r.ts, Getenv: func(k string) string { return env[k] },
		Observe: func(_, o string) { r.outcomes = append(r.outcomes, o) }})
	mux := http.NewServeMux()
	mux.Handle("POST /hooks/{name}", h)
	r.srv = httptest.NewServer(mux)
	t.Cleanup(r.srv.Close)
	return r
}

// post sends body to trigger name with headers, and returns the status
// and the decoded answer.
func (r *rig) post(t *testing.T, name string, body []byte, headers map[string]string) (int, trigger.Answer) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.srv.URL+"/hooks/"+name, bytes.NewReader(body))
	require.NoError(t, err)
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

func (r *rig) flows(t *testing.T) int {
	t.Helper()
	page, err := r.eng.ListFlows(engine.FlowFilter{})
	require.NoError(t, err)
	return len(page.Flows)
}

func signed(body []byte, delivery string) map[string]string {
	return map[string]string{trigger.SignatureHeader: trigger.Sign(secret, body), "X-GitHub-Delivery": delivery}
}

func TestHookChecksTheSignatureOrToken(t *testing.T) {
	r := newRig(t)
	_, err := r.ts.Add(trigger.Input{Name: "ctl", Controller: "ctl", SecretEnv: "HOOK_SECRET", TokenEnv: "HOOK_TOKEN"})
	require.NoError(t, err)
	body := []byte(`{"n":1}`)

	code, _ := r.post(t, "ctl", body, nil)
	require.Equal(t, http.StatusUnauthorized, code, "unsigned")
	code, _ = r.post(t, "ctl", body, map[string]string{trigger.SignatureHeader: trigger.Sign("wrong", body)})
	require.Equal(t, http.StatusUnauthorized, code, "signed with another secret")
	code, _ = r.post(t, "ctl", body, map[string]string{trigger.SignatureHeader: trigger.Sign(secret, []byte(`{"n":2}`))})
	require.Equal(t, http.StatusUnauthorized, code, "the signature of another body")
	code, _ = r.post(t, "ctl", body, map[string]string{"Authorization": "Bearer nope"})
	require.Equal(t, http.StatusUnauthorized, code, "a wrong token")
	require.Zero(t, r.flows(t), "a refused delivery starts nothing")

	code, a := r.post(t, "ctl", body, signed(body, "d1"))
	require.Equal(t, http.StatusAccepted, code)
	require.True(t, a.Created)
	code, _ = r.post(t, "ctl", body, map[string]string{"Authorization": "Bearer tok", "Idempotency-Key": "k1"})
	require.Equal(t, http.StatusAccepted, code, "the bearer token is the other way in")
	f, err := r.eng.GetFlow(a.FlowID)
	require.NoError(t, err)
	require.JSONEq(t, string(body), string(f.State), "the body is the controller's flow's state")

	// GitHub's ping, sent when a webhook is saved, proves the secret and
	// starts nothing; unsigned, it is refused like any delivery.
	ping := map[string]string{"X-GitHub-Event": "ping", "X-GitHub-Delivery": "p1"}
	code, _ = r.post(t, "ctl", body, ping)
	require.Equal(t, http.StatusUnauthorized, code)
	ping[trigger.SignatureHeader] = trigger.Sign(secret, body)
	code, a = r.post(t, "ctl", body, ping)
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, a.FlowID)
	require.Equal(t, 2, r.flows(t), "a ping starts no flow")
	require.Equal(t, "ctl", f.ControllerID)
}

func TestHookDeduplicatesDeliveries(t *testing.T) {
	r := newRig(t)
	_, err := r.ts.Add(trigger.Input{Name: "ctl", Controller: "ctl", SecretEnv: "HOOK_SECRET"})
	require.NoError(t, err)
	body := []byte(`{"n":1}`)
	var first string
	for i := range 3 {
		code, a := r.post(t, "ctl", body, signed(body, "same"))
		if i == 0 {
			require.Equal(t, http.StatusAccepted, code)
			first = a.FlowID
			continue
		}
		require.Equal(t, http.StatusOK, code, "a repeated delivery")
		require.Equal(t, first, a.FlowID, "answers with the first flow")
		require.False(t, a.Created)
	}
	// With no delivery id, the body's digest is the id.
	other := []byte(`{"n":2}`)
	h := map[string]string{trigger.SignatureHeader: trigger.Sign(secret, other)}
	_, a1 := r.post(t, "ctl", other, h)
	code, a2 := r.post(t, "ctl", other, h)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, a1.FlowID, a2.FlowID)
	require.Equal(t, 2, r.flows(t))

	runs, err := r.ts.Runs("ctl", 0)
	require.NoError(t, err)
	require.Len(t, runs, 2, "one run per accepted delivery, none per repeat")
	require.Equal(t, a1.FlowID, runs[0].FlowID, "newest first")

	// A huge Idempotency-Key is kept as its digest, and still deduplicates.
	long := map[string]string{trigger.SignatureHeader: trigger.Sign(secret, other), "Idempotency-Key": strings.Repeat("k", 4000)}
	code, l1 := r.post(t, "ctl", other, long)
	require.Equal(t, http.StatusAccepted, code)
	require.True(t, strings.HasPrefix(l1.Delivery, "sha256:"), l1.Delivery)
	code, l2 := r.post(t, "ctl", other, long)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, l1.FlowID, l2.FlowID)
}

func TestHookBoundsBodyAndRate(t *testing.T) {
	r := newRig(t)
	_, err := r.ts.Add(trigger.Input{Name: "small", Controller: "ctl", SecretEnv: "HOOK_SECRET", MaxBody: 16, Rate: 0.001, Burst: 2})
	require.NoError(t, err)
	big := []byte(`{"pad":"` + strings.Repeat("x", 32) + `"}`)
	code, _ := r.post(t, "small", big, signed(big, "big"))
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	for i, want := range []int{http.StatusAccepted, http.StatusAccepted, http.StatusTooManyRequests} {
		b := []byte(`{"i":` + string(rune('0'+i)) + `}`)
		code, _ := r.post(t, "small", b, signed(b, "d"+string(rune('0'+i))))
		require.Equal(t, want, code, "delivery %d of a burst of 2", i)
	}
	// Strangers do not spend the bucket: an unsigned post is 401, not 429.
	code, _ = r.post(t, "small", []byte(`{}`), nil)
	require.Equal(t, http.StatusUnauthorized, code)
	require.Equal(t, []string{"too_large", "accepted", "accepted", "rate_limited", "unauthorized"}, r.outcomes)
}

func TestHookPipelineArgsAndRefusals(t *testing.T) {
	r := newRig(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "wf.lobster")
	require.NoError(t, os.WriteFile(file, []byte("name: wf\nargs:\n  repo: {}\n  ref: {default: main}\nsteps:\n  - id: a\n    run: echo hi\n"), 0o600))
	_, err := r.ts.Add(trigger.Input{Name: "wf", Pipeline: file, SecretEnv: "HOOK_SECRET"})
	require.NoError(t, err)

	missing := []byte(`{"ref":"dev"}`)
	code, a := r.post(t, "wf", missing, signed(missing, "m"))
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, a.Error, "repo", "names the arg the delivery lacks")
	notJSON := []byte(`repo=x`)
	code, _ = r.post(t, "wf", notJSON, signed(notJSON, "n"))
	require.Equal(t, http.StatusBadRequest, code)
	require.Zero(t, r.flows(t))

	good := []byte(`{"repo":"flowgate"}`)
	code, a = r.post(t, "wf", good, signed(good, "g"))
	require.Equal(t, http.StatusAccepted, code)
	f, err := r.eng.GetFlow(a.FlowID)
	require.NoError(t, err)
	var inv struct{ Args map[string]any }
	require.NoError(t, json.Unmarshal(f.State, &inv))
	require.Equal(t, map[string]any{"repo": "flowgate", "ref": "main"}, inv.Args)

	_, err = r.ts.SetEnabled("wf", false, "ann")
	require.NoError(t, err)
	code, _ = r.post(t, "wf", good, signed(good, "g2"))
	require.Equal(t, http.StatusNotFound, code, "a disabled trigger takes nothing")
	code, _ = r.post(t, "nosuch", good, signed(good, "g3"))
	require.Equal(t, http.StatusNotFound, code)
}

func TestAddRefusesATriggerWithoutSecret(t *testing.T) {
	r := newRig(t)
	_, err := r.ts.Add(trigger.Input{Name: "open", Controller: "ctl"})
	require.ErrorContains(t, err, "--secret-env")
	_, err = r.ts.Add(trigger.Input{Name: "a/b", Controller: "ctl", TokenEnv: "T"})
	require.ErrorContains(t, err, "trigger name")
	_, err = r.ts.Add(trigger.Input{Name: "v", Controller: "ctl", TokenEnv: "tok=abc"})
	require.ErrorContains(t, err, "not an environment variable name")
	_, err = r.ts.Add(trigger.Input{Name: "dup", Controller: "ctl", TokenEnv: "T"})
	require.NoError(t, err)
	_, err = r.ts.Add(trigger.Input{Name: "dup", Controller: "ctl", TokenEnv: "T"})
	require.ErrorContains(t, err, "exists")
}

// A delivery is remembered for trigger.Remember: sent again later, it
// starts a new flow, and its old records are gone, so a busy trigger's
// records stay bounded.
func TestDeliveriesAreForgottenAfterRemember(t *testing.T) {
	r := newRig(t)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ts := trigger.New(r.eng, func() time.Time { return clock })
	tr, err := ts.Add(trigger.Input{Name: "ctl", Controller: "ctl", TokenEnv: "T"})
	require.NoError(t, err)
	first, created, err := ts.Accept(tr, "d1", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.True(t, created)
	again, created, err := ts.Accept(tr, "d1", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, first.ID, again.ID)

	clock = clock.Add(trigger.Remember + time.Minute)
	_, _, err = ts.Accept(tr, "d2", json.RawMessage(`{}`))
	require.NoError(t, err)
	runs, err := ts.Runs("ctl", 0)
	require.NoError(t, err)
	require.Len(t, runs, 1, "d1's run is forgotten")
	later, created, err := ts.Accept(tr, "d1", json.RawMessage(`{}`))
	require.NoError(t, err)
	require.True(t, created, "d1 sent after it was forgotten is a new delivery")
	require.NotEqual(t, first.ID, later.ID)
}

// With --args-from query, the URL's query is the input, as an object of
// strings, and the body is only signed, not read as JSON.
func TestHookArgsFromQuery(t *testing.T) {
	r := newRig(t)
	_, err := r.ts.Add(trigger.Input{Name: "q", Controller: "ctl", ArgsFrom: trigger.ArgsFromQuery, TokenEnv: "HOOK_TOKEN"})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, r.srv.URL+"/hooks/q?branch=main&n=1", strings.NewReader("not json"))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	var a trigger.Answer
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&a))
	f, err := r.eng.GetFlow(a.FlowID)
	require.NoError(t, err)
	require.JSONEq(t, `{"branch":"main","n":"1"}`, string(f.State))
}
