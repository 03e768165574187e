package cli_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/sdk"
)

// dyingGateway serves the API of home from a store opened in this process
// (it starts no task) and dies at the first request dies picks: it makes
// the change that request asks for, then releases the store and drops the
// connection without an answer, as a gateway killed mid-request does.
// What runs tasks afterwards is whatever the command under test finds
// next: with none running, a gateway it hosts itself.
func dyingGateway(t *testing.T, home string, dies func(r *http.Request) bool) {
	t.Helper()
	local, err := api.OpenLocal(home, "flowgate gateway")
	require.NoError(t, err)
	ln, err := api.Listen(gateway.SocketPath(home))
	require.NoError(t, err)
	h := api.NewHandler(local, hclog.NewNullLogger())
	var once sync.Once
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !dies(r) {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		conn, _, err := http.NewResponseController(w).Hijack()
		once.Do(func() {
			srv.Close()
			local.Close()
		})
		if err == nil {
			conn.Close()
		}
	})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		local.Close()
	})
}

// ledgerTask is a shell command that appends a line to a ledger file in a
// new directory each time it runs, then exits with code 3.
func ledgerTask(t *testing.T) (ledger string, argv []string) {
	ledger = filepath.Join(t.TempDir(), "ledger")
	return ledger, []string{"--", "sh", "-c", "echo ran >> " + ledger + "; exit 3"}
}

// runs counts the lines of the ledger.
func runs(t *testing.T, ledger string) int {
	b, err := os.ReadFile(ledger)
	require.NoError(t, err)
	return strings.Count(string(b), "\n")
}

func postsTask(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == "/v1/tasks" }

func readsTask(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/tasks/")
}

// A gateway killed after it created the task but before it answered: with
// an idempotency key, tasks run asks the next gateway (here one it hosts)
// for the same key, follows the one task and exits with its code; it runs
// once. This used to exit 1 while the task went on to run.
func TestTasksRunAsksAgainWithItsKey(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	ledger, argv := ledgerTask(t)
	dyingGateway(t, home, postsTask)
	code, _, errOut := run(t, home, append([]string{"tasks", "run", "--idempotency-key", "k1"}, argv...)...)
	require.Equal(t, 3, code, errOut)
	require.Contains(t, errOut, `asking the next one for idempotency key "k1"`)
	require.Equal(t, 1, runs(t, ledger))
}

// Without a key nobody can tell whether the task was made: tasks run says
// so with exit 5 and how to find out, rather than exit 1 ("failed") while
// the task exists.
func TestTasksRunWithoutKeySaysTheOutcomeIsUnknown(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	_, argv := ledgerTask(t)
	dyingGateway(t, home, postsTask)
	code, _, errOut := run(t, home, append([]string{"tasks", "run", "--owner", "me"}, argv...)...)
	require.Equal(t, 5, code, errOut)
	require.Contains(t, errOut, "whether the task was created is unknown")
	require.Contains(t, errOut, "flowgate tasks list --owner me")
	require.Contains(t, errOut, "--idempotency-key")
}

// A foreground tasks run whose gateway dies while it follows the task
// follows it on through the next gateway and exits with the task's own
// code. It used to exit 1 with "no gateway is running" while the task
// went on to its end.
func TestTasksRunFollowsThroughTheNextGateway(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	ledger, argv := ledgerTask(t)
	dyingGateway(t, home, readsTask)
	code, _, errOut := run(t, home, append([]string{"tasks", "run"}, argv...)...)
	require.Equal(t, 3, code, errOut)
	require.Equal(t, 1, runs(t, ledger))
}

// tasks run --detach whose gateway dies after the task was created still
// answers with the task (exit 0), started through the next gateway.
func TestTasksRunDetachAnswersWithTheTask(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	_, argv := ledgerTask(t)
	dyingGateway(t, home, readsTask)
	code, out, errOut := run(t, home, append([]string{"tasks", "run", "--detach", "--json"}, argv...)...)
	require.Equal(t, 0, code, errOut)
	var task apitype.Task
	require.NoError(t, json.Unmarshal([]byte(out), &task))
	code, out, errOut = run(t, home, "tasks", "list", "--json")
	require.Equal(t, 0, code, errOut)
	var l struct{ Tasks []apitype.Task }
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Len(t, l.Tasks, 1)
	require.Equal(t, task.ID, l.Tasks[0].ID)
	require.NotEqual(t, sdk.TaskQueued, l.Tasks[0].Status, "the next gateway started it")
}
