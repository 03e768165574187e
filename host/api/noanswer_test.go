package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// A gateway that dies after it made the change a request asked for, but
// before it answered, leaves the client with ErrNoAnswer: not
// ErrNoGateway (which says nothing was sent), so the CLI never reports
// such a change as not made.
func TestRemoteNoAnswerAfterTheChange(t *testing.T) {
	t.Parallel()
	local := newLocal(t)
	h := api.NewHandler(local, hclog.NewNullLogger())
	sock, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(httptest.NewRecorder(), r) // the change is made...
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // ...and the answer is lost, as when the gateway is killed
		}
	}))
	remote, err := api.DialRemote(sock)
	require.NoError(t, err)
	defer remote.Close()

	in := apitype.CreateTaskInput{Runtime: "cli", OwnerKey: "o", IdempotencyKey: "once", Spec: sdk.TaskSpec{Argv: []string{"true"}, Cwd: "/"}}
	_, _, err = remote.RunTask(t.Context(), in)
	require.ErrorIs(t, err, api.ErrNoAnswer)
	require.NotErrorIs(t, err, api.ErrNoGateway)
	require.ErrorContains(t, err, "POST /v1/tasks")

	task, err := local.ResolveTask(t.Context(), "once")
	require.NoError(t, err, "the task was made although no answer came")
	require.Equal(t, sdk.TaskQueued, task.Status)
}

// A gateway that dies while it answers the status request DialRemote
// sends is no gateway (ErrNoGateway, so the command opens the store or
// hosts one), not an unknown outcome: a status request changes nothing.
func TestDialRemoteGatewayDiesAtTheProbe(t *testing.T) {
	t.Parallel()
	sock, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	_, err := api.DialRemote(sock)
	require.ErrorIs(t, err, api.ErrNoGateway)
	require.NotErrorIs(t, err, api.ErrNoAnswer)
}

// A gateway that goes away after it got a request's headers but before
// it read the body (it was stopping) cannot have acted on it: the call
// fails with ErrNoGateway, so the command sends it to the next gateway,
// not ErrNoAnswer, which would leave the outcome unknown.
func TestRemoteGatewayGoneBeforeItTookTheBody(t *testing.T) {
	t.Parallel()
	local := newLocal(t)
	h := api.NewHandler(local, hclog.NewNullLogger())
	sock, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // gone before the handler read the request
		}
	}))
	remote, err := api.DialRemote(sock)
	require.NoError(t, err)
	defer remote.Close()

	in := apitype.CreateTaskInput{Runtime: "cli", OwnerKey: "o", IdempotencyKey: "never", Spec: sdk.TaskSpec{Argv: []string{"true"}, Cwd: "/"}}
	_, _, err = remote.RunTask(t.Context(), in)
	require.ErrorIs(t, err, api.ErrNoGateway)
	require.NotErrorIs(t, err, api.ErrNoAnswer)
	require.ErrorContains(t, err, "nothing was sent")

	_, err = local.ResolveTask(t.Context(), "never")
	require.ErrorIs(t, err, sdk.ErrNotFound)
}
