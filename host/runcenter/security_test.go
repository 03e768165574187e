package runcenter_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/runcenter"
	"github.com/flowgate/flowgate/sdk"
)

// A non-loopback address needs a token, TLS or not; named tokens count, and
// a token list with a nameless, repeated or empty entry is refused with
// a message naming the entry.
func TestNonLoopbackWithoutATokenIsRefused(t *testing.T) {
	t.Parallel()
	alice := runcenter.Token{Name: "alice", Token: "a-secret"}
	for _, tc := range []struct {
		cfg  gateway.HTTPConfig
		want string
	}{
		{gateway.HTTPConfig{Addr: "0.0.0.0:7070"}, `http.addr "0.0.0.0:7070" is not a loopback address: refusing to serve it without a token`},
		{gateway.HTTPConfig{Addr: "0.0.0.0:7070", TLSCert: "c.pem", TLSKey: "k.pem"}, "refusing to serve it without a token"},
		{gateway.HTTPConfig{Addr: "192.0.2.7:7070"}, "is not a loopback address"},
		{gateway.HTTPConfig{Addr: "0.0.0.0:7070", Tokens: []runcenter.Token{alice}}, ""},
		{gateway.HTTPConfig{Addr: "0.0.0.0:7070", Tokens: []runcenter.Token{{Token: "x"}}}, "http.tokens[0].name is empty"},
		{gateway.HTTPConfig{Addr: "0.0.0.0:7070", Tokens: []runcenter.Token{{Name: "bob"}}}, "http.tokens[0] (bob) has no token"},
		{gateway.HTTPConfig{Addr: "0.0.0.0:7070", Tokens: []runcenter.Token{alice, {Name: "alice", Token: "b"}}}, `the name "alice" is used twice`},
		{gateway.HTTPConfig{Addr: "0.0.0.0:7070", AuthToken: "a-secret", Tokens: []runcenter.Token{alice}}, "repeats another entry's token"},
		{gateway.HTTPConfig{Tokens: []runcenter.Token{alice}}, "no address to listen on"},
	} {
		err := tc.cfg.Validate()
		if tc.want == "" {
			require.NoError(t, err, "%+v", tc.cfg)
			continue
		}
		require.ErrorContains(t, err, tc.want, "%+v", tc.cfg)
	}
	fc, err := gateway.LoadConfig(writeFile(t, "http:\n  addr: 0.0.0.0:7070\n  tokens:\n    - name: alice\n      token: s3cret\n"))
	require.NoError(t, err)
	require.Equal(t, []runcenter.Token{{Name: "alice", Token: "s3cret"}}, fc.HTTP.Tokens)
}

// pages lists every page of the run center for a site with flow id.
func pages(id string) []string {
	return []string{"/", "/?status=waiting", "/flows/" + id, "/flows/" + id + "/logs", "/flows/" + id + "/cancel", "/gates", "/cron", "/audit", "/plugins"}
}

// Without a token every page, the history stream, the metrics and every
// form answer 401; a browser gets the login form with it, anything else
// a line saying what to send. A wrong token is no better.
func TestRequestWithoutATokenGets401(t *testing.T) {
	t.Parallel()
	s := startSite(t, runcenter.Token{Name: "alice", Token: "alice-token"})
	f := s.gatedFlow("g")
	paths := append(pages(f.ID), "/flows/"+f.ID+"/logs/download", "/pulse?page=/gates", "/v1/flows/"+f.ID+"/history/stream", "/metrics", "/readyz")
	for _, p := range paths {
		for _, tok := range []string{"", "wrong"} {
			resp, body := s.do(http.MethodGet, p, tok, nil)
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "GET %s with %q", p, tok)
			require.Contains(t, body, "Authorization: Bearer", p)
		}
		resp, body := s.do(http.MethodGet, p, "", nil, "Accept", "text/html")
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, p)
		require.Contains(t, body, `action="/login"`, "a browser gets the login form")
	}
	for _, p := range []string{"/gates/decide", "/flows/" + f.ID + "/cancel", "/logout"} {
		resp, _ := s.do(http.MethodPost, p, "", url.Values{"csrf": {"x"}})
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, p)
	}
	// Static files and the login form itself are served to everyone.
	for _, p := range []string{"/login", "/static/app.css", "/static/app.js"} {
		resp, _ := s.do(http.MethodGet, p, "", nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, p)
	}
	v, err := s.c.ViewFlow(context.Background(), f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowWaiting, v.Status, "nothing was decided")
}

// Every state-changing request needs the page's CSRF token: without it,
// or with another one, the answer is 403 and nothing changes, even with
// a valid bearer token. With it, the gate is answered by the token's
// name, whatever the form says.
func TestPostWithoutCSRFGets403(t *testing.T) {
	t.Parallel()
	s := startSite(t, runcenter.Token{Name: "alice", Token: "alice-token"}, runcenter.Token{Name: "bob", Token: "bob-token"})
	f := s.gatedFlow("g")
	decide := url.Values{"flow": {f.ID}, "kind": {"approval"}, "revision": {"2"}, "decision": {"approve"}, "back": {"/gates"}, "by": {"mallory"}}
	bobs := s.csrf("/gates", "bob-token")
	for _, csrf := range []string{"", "forged", bobs} {
		form := url.Values{}
		for k, v := range decide {
			form[k] = v
		}
		if csrf != "" {
			form.Set("csrf", csrf)
		}
		for _, p := range []string{"/gates/decide", "/flows/" + f.ID + "/cancel", "/logout", "/login"} {
			resp, body := s.do(http.MethodPost, p, "alice-token", form)
			require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s with csrf %q: %s", p, csrf, body)
			require.Contains(t, body, "CSRF")
		}
	}
	v, err := s.c.ViewFlow(context.Background(), f.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowWaiting, v.Status, "nothing was decided")

	decide.Set("csrf", s.csrf("/gates", "alice-token"))
	resp, body := s.do(http.MethodPost, "/gates/decide", "alice-token", decide)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	require.Equal(t, "/gates", resp.Header.Get("Location"))
	hist, err := s.c.History(context.Background(), f.ID, 0, 0)
	require.NoError(t, err)
	last := hist.Entries[len(hist.Entries)-1]
	require.Equal(t, apitype.HistoryGateAnswered, last.Kind)
	require.Equal(t, "alice", last.By, "the approver is the token's name, never the form's")

	// A request from another origin is refused even with the token.
	resp, _ = s.do(http.MethodPost, "/flows/"+f.ID+"/cancel", "alice-token", url.Values{"csrf": {decide.Get("csrf")}},
		"Sec-Fetch-Site", "cross-site")
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// The login form sets an HttpOnly, SameSite=Strict cookie that stands for
// the token; a wrong token gets 401 and the form again, and the form only
// ever sends the browser back to a page of this site. The cookie's
// holder cancels a flow under the token's name.
func TestLoginSetsACookieThatActsAsTheToken(t *testing.T) {
	t.Parallel()
	s := startSite(t, runcenter.Token{Name: "carol", Token: "carol-token"})
	f := s.gatedFlow("g")
	csrf := s.csrf("/login", "")
	resp, body := s.do(http.MethodPost, "/login", "", url.Values{"csrf": {csrf}, "token": {"nope"}, "next": {"/gates"}})
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, body, "not one of this gateway")

	for next, want := range map[string]string{"/gates": "/gates", "//evil.example/": "/", "https://evil.example/": "/", "/\\evil": "/"} {
		resp, _ = s.do(http.MethodPost, "/login", "", url.Values{"csrf": {csrf}, "token": {"carol-token"}, "next": {next}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode, next)
		require.Equal(t, want, resp.Header.Get("Location"), next)
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		cookie = c
	}
	require.NotNil(t, cookie)
	require.True(t, cookie.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, cookie.SameSite)
	require.NotContains(t, cookie.Value, "carol-token", "the cookie holds the token encoded, not as typed")

	withCookie := func(method, path string, form url.Values) (*http.Response, string) {
		return s.do(method, path, "", form, "Cookie", cookie.Name+"="+cookie.Value)
	}
	resp, body = withCookie(http.MethodGet, "/flows/"+f.ID, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Contains(t, body, "carol")
	m := csrfField.FindStringSubmatch(body)
	require.NotNil(t, m)
	resp, body = withCookie(http.MethodPost, "/flows/"+f.ID+"/cancel", url.Values{"csrf": {m[1]}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, body)
	hist, err := s.c.History(context.Background(), f.ID, 0, 0)
	require.NoError(t, err)
	last := hist.Entries[len(hist.Entries)-1]
	require.Equal(t, apitype.HistoryCancelRequested, last.Kind)
	require.Equal(t, "carol", last.By)
}

// A goal of <script>alert(1)</script> shows as text on every page that
// shows it: the flow list, the flow's page, its logs, the gates (goal and
// prompt), a page update sent by /pulse, and an error page that repeats
// a bad id.
func TestScriptGoalIsEscapedOnEveryPage(t *testing.T) {
	t.Parallel()
	s := startSite(t, runcenter.Token{Name: "alice", Token: "alice-token"})
	f := s.gatedFlow(scriptGoal)
	escaped := "&lt;script&gt;alert(1)&lt;/script&gt;"
	for _, p := range pages(f.ID) {
		body := s.get(p, "alice-token")
		require.NotContains(t, body, scriptGoal, p)
		if p != "/cron" && p != "/audit" && p != "/plugins" && !strings.HasSuffix(p, "/logs") {
			require.Contains(t, body, escaped, "%s shows the goal as text", p)
		}
	}
	resp, body := s.do(http.MethodGet, "/flows/"+url.PathEscape(scriptGoal), "alice-token", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.NotContains(t, body, scriptGoal)
	require.Contains(t, body, escaped, "the error repeats the id as text")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/pulse?page=/gates", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer alice-token")
	pr, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer pr.Body.Close()
	require.Equal(t, "text/event-stream", pr.Header.Get("Content-Type"))
	first := readEvent(t, pr)
	require.Contains(t, first, escaped, "the first update is the page as it is")
	require.NotContains(t, first, scriptGoal)
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "script-src 'self'")
}
