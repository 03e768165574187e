package cli_test

import (
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A gateway that answers 200 without the task it was asked for makes
// `tasks run` fail with a message, not panic on a nil task.
func TestTasksRunEmptyGatewayAnswer(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{}`, `null`} {
		home := shortHome(t)
		l, err := net.Listen("unix", filepath.Join(home, "gateway.sock"))
		require.NoError(t, err)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if r.URL.Path == "/v1/status" {
				w.Write([]byte(`{"running":true,"home":"` + home + `"}`))
				return
			}
			w.Write([]byte(body))
		})}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })

		var code int
		var errOut string
		require.NotPanics(t, func() { code, _, errOut = run(t, home, "tasks", "run", "--", "true") })
		require.Equal(t, 1, code, errOut)
		require.Contains(t, errOut, "carries no task")
	}
}
