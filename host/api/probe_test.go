package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
)

// /healthz answers while the gateway serves; /readyz answers 200 while the
// store takes writes and 503 with "store not writable: disk full" while it
// does not, and 200 again once writes resume; task files that cannot be
// written make it 503 too.
func TestProbesSayWhenTheStoreIsNotWritable(t *testing.T) {
	t.Parallel()
	health := apitype.WriteHealth{Writable: true}
	fake := &fakeClient{status: func(context.Context) (api.GatewayStatus, error) {
		h := health
		return api.GatewayStatus{Running: true, Store: &h}, nil
	}}
	sock, _ := serve(t, api.NewHandler(fake, hclog.NewNullLogger()))
	readyz := func() (int, api.Readiness) {
		r := do(t, sock, "GET", "/readyz", "")
		var out api.Readiness
		require.NoError(t, json.Unmarshal(r.body, &out), "body: %s", r.body)
		return r.status, out
	}

	r := do(t, sock, "GET", "/healthz", "")
	require.Equal(t, 200, r.status)
	require.JSONEq(t, `{"ok":true}`, string(r.body))
	status, out := readyz()
	require.Equal(t, 200, status)
	require.True(t, out.Ready)

	health = apitype.WriteHealth{DiskFull: true, LastError: "write flowgate.db: no space left on device", Failures: 3}
	status, out = readyz()
	require.Equal(t, 503, status)
	require.False(t, out.Ready)
	require.Contains(t, out.Problem, "store not writable: disk full")
	require.Equal(t, int64(3), out.Store.Failures)

	health = apitype.WriteHealth{Writable: true, LastError: "write flowgate.db: no space left on device"}
	status, out = readyz()
	require.Equal(t, 200, status)
	require.True(t, out.Ready)

	health = apitype.WriteHealth{Writable: true}
	files := apitype.WriteHealth{DiskFull: true}
	fake.status = func(context.Context) (api.GatewayStatus, error) {
		h := health
		return api.GatewayStatus{Running: true, Store: &h, TaskFiles: &files}, nil
	}
	status, out = readyz()
	require.Equal(t, 503, status)
	require.Contains(t, out.Problem, "task files not writable: disk full")

	fake.status = func(context.Context) (api.GatewayStatus, error) {
		return api.GatewayStatus{}, errors.New("store: closed")
	}
	status, out = readyz()
	require.Equal(t, 503, status)
	require.Contains(t, out.Problem, "store: closed")

	require.Equal(t, 400, do(t, sock, "GET", "/readyz?x=1", "").status)
}
