package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// A gateway that makes the change a request asked for and then gives no
// answer (it was paused, or is stuck) leaves the client with ErrNoAnswer
// once the answer wait has passed, never waiting on it forever: the
// command can say the outcome is unknown.
func TestRemoteGivesUpOnAnAnswerThatDoesNotCome(t *testing.T) {
	t.Setenv(api.AnswerWaitEnv, "300ms")
	local := newLocal(t)
	h := api.NewHandler(local, hclog.NewNullLogger())
	hold, made := make(chan struct{}), make(chan struct{}, 1)
	sock, _ := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(httptest.NewRecorder(), r) // the change is made...
		made <- struct{}{}
		<-hold // ...and the answer never comes
	}))
	t.Cleanup(func() { close(hold) })
	remote, err := api.DialRemote(sock)
	require.NoError(t, err)
	defer remote.Close()

	in := apitype.CreateTaskInput{Runtime: "cli", OwnerKey: "o", IdempotencyKey: "held", Spec: sdk.TaskSpec{Argv: []string{"true"}, Cwd: "/"}}
	answered := make(chan error, 1)
	go func() {
		_, _, err := remote.RunTask(t.Context(), in)
		answered <- err
	}()
	select {
	case err = <-answered:
	case <-time.After(time.Minute):
		t.Fatal("RunTask still waited for an answer that never comes after a minute")
	}
	require.ErrorIs(t, err, api.ErrNoAnswer)
	require.ErrorContains(t, err, "POST /v1/tasks")
	require.ErrorContains(t, err, "no answer within 300ms; "+api.AnswerWaitEnv)

	// On a loaded machine the client may give up before the handler has
	// made the change; the change is made all the same.
	select {
	case <-made:
	case <-time.After(time.Minute):
		t.Fatal("the gateway never made the change")
	}
	task, err := local.ResolveTask(t.Context(), "held")
	require.NoError(t, err, "the task was made although no answer came")
	require.Equal(t, sdk.TaskQueued, task.Status)
}

// An answer wait that is not a positive duration is refused as invalid,
// naming the variable, before anything is sent.
func TestAnswerWaitMustBeADuration(t *testing.T) {
	for _, v := range []string{"soon", "0s", "-1s"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv(api.AnswerWaitEnv, v)
			_, err := api.DialRemote(socketPath(t))
			require.ErrorIs(t, err, sdk.ErrInvalid)
			require.ErrorContains(t, err, api.AnswerWaitEnv+"=")
		})
	}
}
