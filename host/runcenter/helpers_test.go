package runcenter_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/runcenter"
	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
)

// scriptGoal is user text that must only ever show as text.
const scriptGoal = "<script>alert(1)</script>"

// site is a real gateway serving the run center on a loopback port.
type site struct {
	t    testing.TB
	home string
	base string
	c    api.Client
	hc   *http.Client
}

// startSite starts a gateway on a fresh home with the given named tokens
// on 127.0.0.1, port 0.
func startSite(t testing.TB, tokens ...runcenter.Token) *site {
	t.Helper()
	return startSeeded(t, nil, tokens...)
}

// startSeeded is startSite on a home whose store seed (if not nil) fills
// first, through the engine, with no gateway running. The gateway runs
// the pipeline controller in its process, as flowgate gateway does, so
// a pipeline flow the seed creates runs.
func startSeeded(t testing.TB, seed func(*engine.Engine), tokens ...runcenter.Token) *site {
	t.Helper()
	home, err := os.MkdirTemp("", "fgrc") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	if seed != nil {
		l, err := api.OpenLocal(home, "runcenter test")
		require.NoError(t, err)
		seed(l.Engine())
		require.NoError(t, l.Close())
	}
	var fc gateway.FileConfig
	fc.HTTP = gateway.HTTPConfig{Addr: "127.0.0.1:0", Tokens: tokens}
	fc.Maintenance.Disabled = true
	g, err := gateway.New(gateway.Config{Home: home, File: fc, Builtins: []string{flows.PipelineController},
		Controllers: map[string]func(func(string) string) sdk.Controller{flows.PipelineController: pipeline.NewFrom}})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, g.Start(ctx))
	t.Cleanup(func() { require.NoError(t, g.Stop(ctx)) })
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &site{t: t, home: home, base: "http://" + g.HTTPAddr(), c: g.Client(), hc: hc}
}

// do sends a request with the bearer token (none when ""), and returns
// the status and body.
func (s *site) do(method, path, token string, form url.Values, header ...string) (*http.Response, string) {
	s.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, s.base+path, body)
	require.NoError(s.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.hc.Do(req)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	return resp, string(b)
}

// get fetches a page with token and requires 200.
func (s *site) get(path, token string) string {
	s.t.Helper()
	resp, body := s.do(http.MethodGet, path, token, nil)
	require.Equal(s.t, http.StatusOK, resp.StatusCode, "GET %s: %s", path, body)
	return body
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token of the page at path as token sees it.
func (s *site) csrf(path, token string) string {
	s.t.Helper()
	m := csrfField.FindStringSubmatch(s.get(path, token))
	require.NotNil(s.t, m, "the page %s has a form with a CSRF token", path)
	return m[1]
}

// gatedFlow creates a managed flow with goal parked at an approval gate.
func (s *site) gatedFlow(goal string) *sdk.Flow {
	s.t.Helper()
	return s.gateOf(goal, sdk.GateApproval)
}

// gateOf creates a managed flow with goal parked at a gate of kind.
func (s *site) gateOf(goal, kind string) *sdk.Flow {
	s.t.Helper()
	ctx := context.Background()
	f, err := s.c.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "web", ControllerID: "ctl", Goal: goal, AllowUnknownController: true})
	require.NoError(s.t, err)
	f, err = s.c.UpdateFlow(ctx, f.ID, f.Revision, apitype.FlowPatch{Status: sdk.FlowWaiting,
		State: json.RawMessage(`{}`), Wait: json.RawMessage(`{"kind":"` + kind + `","step":"review","prompt":"` + strings.ReplaceAll(goal, `"`, `\"`) + `?"}`)})
	require.NoError(s.t, err)
	return f
}

// writeFile writes a config file and returns its path.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gateway.yaml")
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

// readEvent reads one server-sent event of resp and returns its data
// lines joined.
func readEvent(t *testing.T, resp *http.Response) string {
	t.Helper()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var data []string
	for sc.Scan() {
		line := sc.Text()
		if line == "" && len(data) > 0 {
			return strings.Join(data, "\n")
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, d)
		}
	}
	require.NoError(t, sc.Err())
	t.Fatal("the stream ended before an event")
	return ""
}
