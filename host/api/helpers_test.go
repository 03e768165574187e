package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
)

// gateway is a real store and engine served by the API on a real unix
// socket, with a Remote dialled to it.
type gateway struct {
	local  *api.Local
	eng    *engine.Engine
	remote *api.Remote
	sock   string
	srv    *http.Server
}

// newLocal opens a real store in a temporary directory.
func newLocal(t testing.TB) *api.Local {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "flowgate.db"), store.Options{})
	require.NoError(t, err)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	local := api.NewLocal(st, eng, dir, nil)
	t.Cleanup(func() { local.Close() })
	return local
}

// socketPath returns a path for a unix socket in a fresh short directory:
// t.TempDir() can exceed the 107 bytes a socket path may have.
func socketPath(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fg")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "gateway.sock")
}

// serve serves h on a socket made by Listen and stops it when the test
// ends.
func serve(t *testing.T, h http.Handler) (string, *http.Server) {
	t.Helper()
	sock := socketPath(t)
	l, err := api.Listen(sock)
	require.NoError(t, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(l)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return sock, srv
}

func newGateway(t *testing.T) *gateway {
	t.Helper()
	local := newLocal(t)
	sock, srv := serve(t, api.NewHandler(local, hclog.NewNullLogger()))
	remote, err := api.DialRemote(sock)
	require.NoError(t, err)
	t.Cleanup(func() { remote.Close() })
	return &gateway{local: local, eng: local.Engine(), remote: remote, sock: sock, srv: srv}
}

// rawClient is a plain HTTP client over the unix socket, for requests the
// Remote never sends.
func rawClient(sock string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}
}

// wireError is the error body of the API.
type wireError struct {
	Error struct {
		Code     string          `json:"code"`
		Message  string          `json:"message"`
		Current  json.RawMessage `json:"current"`
		Expected *int64          `json:"expected"`
	} `json:"error"`
}

// rawResponse is what a raw request got back.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

// do sends one raw request and returns the answer.
func do(t *testing.T, sock, method, path, body string) rawResponse {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://flowgate"+path, r)
	require.NoError(t, err)
	hc := rawClient(sock)
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

// errorOf decodes an error answer, requiring it to be one.
func errorOf(t *testing.T, r rawResponse) wireError {
	t.Helper()
	require.Equal(t, "application/json", r.header.Get("Content-Type"), "body: %s", r.body)
	var e wireError
	require.NoError(t, json.Unmarshal(r.body, &e), "body: %s", r.body)
	require.NotEmpty(t, e.Error.Code, "body: %s", r.body)
	require.NotEmpty(t, e.Error.Message, "body: %s", r.body)
	return e
}

// fakeClient is a Client whose methods are the functions set on it; any
// other method panics (the embedded interface is nil), which the handler
// must survive.
type fakeClient struct {
	api.Client
	status    func(ctx context.Context) (api.GatewayStatus, error)
	listTasks func(ctx context.Context, f apitype.TaskFilter) (apitype.TaskPage, error)
	viewFlow  func(ctx context.Context, token string) (apitype.FlowView, error)
}

func (f *fakeClient) Status(ctx context.Context) (api.GatewayStatus, error) {
	if f.status == nil {
		return api.GatewayStatus{Running: true, Home: "/fake"}, nil
	}
	return f.status(ctx)
}

func (f *fakeClient) ListTasks(ctx context.Context, filter apitype.TaskFilter) (apitype.TaskPage, error) {
	if f.listTasks == nil {
		panic("fakeClient: ListTasks not set")
	}
	return f.listTasks(ctx, filter)
}

func (f *fakeClient) ViewFlow(ctx context.Context, token string) (apitype.FlowView, error) {
	if f.viewFlow == nil {
		panic("fakeClient: ViewFlow not set")
	}
	return f.viewFlow(ctx, token)
}

// requireSameError requires two clients' errors to match: the same
// message and both matching sentinel.
func requireSameError(t *testing.T, want, got, sentinel error, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, want, msgAndArgs...)
	require.Error(t, got, msgAndArgs...)
	require.ErrorIs(t, want, sentinel, msgAndArgs...)
	require.ErrorIs(t, got, sentinel, msgAndArgs...)
	require.Equal(t, want.Error(), got.Error(), msgAndArgs...)
	require.False(t, errors.Is(got, api.ErrNoGateway), msgAndArgs...)
}
