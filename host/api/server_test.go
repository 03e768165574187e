package api_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// TestHandlerRefusesBadRequests sends what no Remote sends and requires a
// JSON error with the right status and code for each.
func TestHandlerRefusesBadRequests(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	f, err := g.local.CreateFlow(t.Context(), apitype.CreateFlowInput{OwnerKey: "o", ControllerID: "c", Goal: "g"})
	require.NoError(t, err)
	update := "/v1/flows/" + f.ID + "/update"

	cases := []struct {
		name, method, path, body string
		status                   int
		code, message            string
	}{
		{"malformed JSON", "POST", "/v1/flows", `{"owner_key":`, 400, "invalid", "malformed JSON"},
		{"syntax error", "POST", "/v1/flows", `{"owner_key" "o"}`, 400, "invalid", "malformed JSON in request body at byte"},
		{"unknown field", "POST", "/v1/flows", `{"owner_key":"o","goal":"g","controller_id":"c","bogus":1}`, 400, "invalid", `unknown field "bogus"`},
		{"unknown nested field", "POST", update, `{"expected_revision":0,"patch":{"stauts":"running"}}`, 400, "invalid", `unknown field "stauts"`},
		{"wrong type", "POST", "/v1/flows", `{"owner_key":5}`, 400, "invalid", "field owner_key holds a JSON number, want a string"},
		{"array body", "POST", "/v1/tasks", `[1]`, 400, "invalid", "request body holds a JSON array, want an object"},
		{"two values", "POST", "/v1/flows", `{} {}`, 400, "invalid", "more than one JSON value"},
		{"trailing garbage", "POST", "/v1/flows", `{}x`, 400, "invalid", "malformed JSON"},
		{"empty body", "POST", "/v1/tasks", ``, 400, "invalid", "request body is empty"},
		{"bad duration", "POST", "/v1/tasks", `{"owner_key":"o","spec":{"argv":["x"],"timeout":"soon"}}`, 400, "invalid", `invalid duration "soon"`},
		{"no expected revision", "POST", update, `{"patch":{"current_step":"x"}}`, 400, "invalid", "expected_revision is required"},
		{"revision as string", "POST", update, `{"expected_revision":"0","patch":{}}`, 400, "invalid", "field expected_revision holds a JSON string, want an integer"},
		{"query on a post", "POST", "/v1/tasks?x=1", `{}`, 400, "invalid", `takes no query parameters, got "x"`},
		{"limit not a number", "GET", "/v1/tasks?limit=abc", ``, 400, "invalid", `limit "abc"`},
		{"negative limit", "GET", "/v1/flows?limit=-1", ``, 400, "invalid", `limit "-1"`},
		{"unknown task status", "GET", "/v1/tasks?status=done", ``, 400, "invalid", `unknown task status "done"`},
		{"unknown flow status", "GET", "/v1/flows?status=done", ``, 400, "invalid", `unknown flow status "done"`},
		{"unknown mode", "GET", "/v1/flows?mode=auto", ``, 400, "invalid", `unknown sync mode "auto"`},
		{"unknown parameter", "GET", "/v1/tasks?stauts=queued", ``, 400, "invalid", `unknown query parameter "stauts"`},
		{"repeated parameter", "GET", "/v1/tasks?limit=1&limit=2", ``, 400, "invalid", `"limit" is given 2 times`},
		{"bad escape", "GET", "/v1/tasks?owner=%zz", ``, 400, "invalid", "malformed query string"},
		{"parameter on a view", "GET", "/v1/flows/" + f.ID + "?verbose=1", ``, 400, "invalid", `unknown query parameter "verbose" (accepted: mark, wait)`},
		{"unknown route", "GET", "/v1/nope", ``, 404, "no_route", "no route GET /v1/nope"},
		{"root", "GET", "/", ``, 404, "no_route", "no route GET /"},
		{"old version", "GET", "/v0/tasks", ``, 404, "no_route", "restart the gateway"},
		{"missing record", "GET", "/v1/tasks/nope", ``, 404, "not_found", `"nope"`},
		{"wrong method", "DELETE", "/v1/tasks", ``, 405, "method_not_allowed", "DELETE is not allowed on /v1/tasks; use GET, HEAD, POST"},
		{"get a cancel", "GET", "/v1/flows/x/cancel", ``, 405, "method_not_allowed", "use POST"},
		{"post a view", "POST", "/v1/flows/x", `{}`, 405, "method_not_allowed", "use GET, HEAD"},
	}
	for _, tc := range cases {
		r := do(t, g.sock, tc.method, tc.path, tc.body)
		require.Equal(t, tc.status, r.status, "%s: %s", tc.name, r.body)
		e := errorOf(t, r)
		require.Equal(t, tc.code, e.Error.Code, tc.name)
		require.Contains(t, e.Error.Message, tc.message, tc.name)
		require.Nil(t, e.Error.Current, tc.name)
		if tc.status == 405 {
			require.NotEmpty(t, r.header.Get("Allow"), tc.name)
		}
	}

	v, err := g.local.ViewFlow(t.Context(), f.ID)
	require.NoError(t, err)
	require.Equal(t, f, v.Flow, "no refused request changed the flow")
}

func TestHandlerRefusesLargeBody(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	body := `{"owner_key":"o","controller_id":"c","goal":"` + strings.Repeat("x", 5<<20) + `"}`
	r := do(t, g.sock, "POST", "/v1/flows", body)
	require.Equal(t, http.StatusRequestEntityTooLarge, r.status, "%.200s", r.body)
	e := errorOf(t, r)
	require.Equal(t, "invalid", e.Error.Code)
	require.Contains(t, e.Error.Message, "request body is larger than 4194304 bytes")
	counts, err := g.local.CountFlows(t.Context())
	require.NoError(t, err)
	require.Zero(t, counts.Total)
}

func TestHandlerAnswers(t *testing.T) {
	t.Parallel()
	g := newGateway(t)

	r := do(t, g.sock, "POST", "/v1/flows", `{"owner_key":"o","controller_id":"c","goal":"g","state":null}`)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	var f sdk.Flow
	require.NoError(t, json.Unmarshal(r.body, &f))
	require.Equal(t, json.RawMessage(`null`), f.State, "state null is kept distinct from absent")

	task := `{"owner_key":"o","spec":{"argv":["true"],"timeout":"1m"},"idempotency_key":"k"}`
	r = do(t, g.sock, "POST", "/v1/tasks", task)
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	require.Contains(t, string(r.body), `"created":true`)
	require.Contains(t, string(r.body), `"timeout":"1m0s"`)
	r = do(t, g.sock, "POST", "/v1/tasks", task)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	require.Contains(t, string(r.body), `"created":false`)

	r = do(t, g.sock, "GET", "/v1/tasks?owner=nobody", "")
	require.Equal(t, http.StatusOK, r.status)
	require.JSONEq(t, `{"tasks":[]}`, string(r.body))
	r = do(t, g.sock, "GET", "/v1/flows?owner=nobody&limit=5", "")
	require.Equal(t, http.StatusOK, r.status)
	require.JSONEq(t, `{"flows":[]}`, string(r.body))

	r = do(t, g.sock, "POST", "/v1/flows/"+f.ID+"/update", `{"expected_revision":5,"patch":{"status":"running"}}`)
	require.Equal(t, http.StatusConflict, r.status)
	e := errorOf(t, r)
	require.Equal(t, "revision_conflict", e.Error.Code)
	require.Equal(t, int64(5), *e.Error.Expected)
	var current sdk.Flow
	require.NoError(t, json.Unmarshal(e.Error.Current, &current))
	require.Equal(t, f, current)

	r = do(t, g.sock, "HEAD", "/v1/status", "")
	require.Equal(t, http.StatusOK, r.status)

	// A client from before enable and disable sent who asked posts no
	// body; the call is still understood (here: no such job).
	for _, path := range []string{"/v1/cron/jobs/ghost/disable", "/v1/triggers/ghost/enable"} {
		r = do(t, g.sock, "POST", path, "")
		require.Equal(t, http.StatusNotFound, r.status, "%s: %s", path, r.body)
		require.Equal(t, "not_found", errorOf(t, r).Error.Code, path)
	}
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestHandlerSurvivesPanic serves a client whose methods panic: each
// request gets a JSON internal error, the panic is logged with its stack,
// and the server goes on serving.
func TestHandlerSurvivesPanic(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	logger := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Debug})
	sock, _ := serve(t, api.NewHandler(&fakeClient{}, logger))

	for _, path := range []string{"/v1/tasks", "/v1/flows/x", "/v1/flow-counts"} {
		r := do(t, sock, "GET", path, "")
		require.Equal(t, http.StatusInternalServerError, r.status, path)
		e := errorOf(t, r)
		require.Equal(t, "internal", e.Error.Code)
		require.Equal(t, "the gateway failed while serving GET "+path+"; see the gateway log", e.Error.Message)
	}
	r := do(t, sock, "GET", "/v1/status", "")
	require.Equal(t, http.StatusOK, r.status, "the server still serves")
	require.Contains(t, logs.String(), "panic while serving a request")
	require.Contains(t, logs.String(), "fakeClient: ListTasks not set")
	require.Contains(t, logs.String(), "goroutine")
}

// FuzzHandler requires that no request, however malformed, panics the
// handler or gets anything but a JSON answer.
func FuzzHandler(f *testing.F) {
	seeds := []struct{ method, path, body string }{
		{"GET", "/v1/tasks?limit=3&status=queued", ""},
		{"GET", "/v1/flows?mode=managed&after=zz", ""},
		{"POST", "/v1/flows", `{"owner_key":"o","controller_id":"c","goal":"g","state":{"a":[1,2]}}`},
		{"POST", "/v1/flows", `{"state":"\u0000"}`},
		{"POST", "/v1/tasks", `{"owner_key":"o","spec":{"shell":"x","retry":{"max_attempts":-1}}}`},
		{"POST", "/v1/tasks", `{"owner_key":"o","spec":{"argv":["a"],"timeout":1e400}}`},
		{"POST", "/v1/flows/x/update", `{"expected_revision":-9223372036854775808,"patch":{"wait":null}}`},
		{"POST", "/v1/flows/%00/cancel", ``},
		{"POST", "/v1/tasks/%2E%2E/cancel", ``},
		{"GET", "/v1/tasks/%ff%fe", ""},
		{"GET", "/v1//flows", ""},
		{"PUT", "/v1/status", "{"},
		{"GET", "*", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.body)
	}
	h := api.NewHandler(newLocal(f), hclog.NewNullLogger())
	f.Fuzz(func(t *testing.T, method, path, body string) {
		// Parse the request as the server does; what it refuses never
		// reaches a handler.
		raw := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: flowgate\r\nContent-Length: %d\r\n\r\n%s", method, path, len(body), body)
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			t.Skip()
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 300 && rec.Code < 400 {
			return // the mux's redirect of an unclean path
		}
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"), "%s %s: %s", method, path, rec.Body)
		require.True(t, json.Valid(rec.Body.Bytes()), "%s %s: %s", method, path, rec.Body)
		if rec.Code >= 400 {
			var e wireError
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
			require.NotContains(t, e.Error.Message, "the gateway failed while serving", "%s %s panicked", method, path)
		}
	})
}
