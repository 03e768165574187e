package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/fulldisk"
	"github.com/flowgate/flowgate/sdk"
)

// fullDiskTasks is the pending work: as many as the red team's flows.
const fullDiskTasks = 54

// resultArgv prints a 4 KiB JSON result, which the task's record keeps: a
// task's end needs room in the store.
var resultArgv = []string{"/bin/sh", "-c", `printf '"%04096d"' 0`}

// A gateway started with pending work on a full disk (a 2 MiB tmpfs filled
// up by a filler file) neither spins nor floods its log: over a window of a
// few seconds it tries a bounded number of commits and logs a bounded
// number of lines (counts, not timings: a slower machine only makes
// fewer). Its status and /readyz say "store not writable: disk full". Once
// the filler is removed it notices by itself, with no restart, and runs
// every task to success.
//
// The store file is bound to a file on the small disk, so the store is what
// runs out of space; the task logs stay on the home's own disk.
func TestGatewayOnAFullDiskHoldsBackAndResumes(t *testing.T) {
	disk := fulldisk.Mount(t, 2<<20)
	dir, err := os.MkdirTemp("", "fgfull") // short: the socket path is bounded
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, home.Ensure(dir))
	fulldisk.BindFile(t, filepath.Join(disk, home.DBFile), filepath.Join(dir, home.DBFile))
	queueTasks(t, dir, fullDiskTasks)
	filler := fulldisk.Fill(t, disk)

	logs := &fulldisk.Log{}
	g, err := gateway.New(gateway.Config{
		Home: dir, Launch: testLaunch, Poll: 20 * time.Millisecond,
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: logs}),
	})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, g.Start(ctx), "a gateway starts on a full disk")
	t.Cleanup(func() { require.NoError(t, g.Stop(ctx)) })
	c := g.Client()

	status := func() api.GatewayStatus {
		st, err := c.Status(ctx)
		require.NoError(t, err)
		require.NotNil(t, st.Store)
		return st
	}
	waitFor(t, "the gateway reports the disk full", func() bool { return status().Store.DiskFull })
	start, lines := status().Store.Attempts, logs.Lines()
	time.Sleep(3 * time.Second) // the window over which commits and lines are counted
	st := status()
	attempts, logged := st.Store.Attempts-start, logs.Lines()-lines
	t.Logf("on the full disk, in the window: %d commits tried, %d log lines", attempts, logged)
	require.LessOrEqual(t, attempts, int64(120), "commits tried on a full disk in the window (a busy loop tries thousands)")
	require.LessOrEqual(t, logged, 20, "log lines on a full disk in the window:\n%s", logs.String())
	require.Less(t, st.Tasks[sdk.TaskSucceeded], fullDiskTasks, "the disk was full before the work could finish")
	require.Contains(t, st.Store.Problem(), "store not writable: disk full")
	code, ready := readyz(t, dir)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, ready.Problem, "store not writable: disk full")

	filler.Free(t)
	waitFor(t, "every task succeeded once space returned", func() bool {
		st = status()
		return st.Tasks[sdk.TaskSucceeded] == fullDiskTasks
	})
	require.True(t, status().Store.Writable, "the gateway noticed by itself")
	code, ready = readyz(t, dir)
	require.Equal(t, http.StatusOK, code)
	require.True(t, ready.Ready)
}

// queueTasks records n queued tasks in the store of dir, as the CLI does
// when no gateway runs.
func queueTasks(t *testing.T, dir string, n int) {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, home.DBFile), store.Options{})
	require.NoError(t, err)
	defer st.Close()
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	for i := range n {
		_, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: fmt.Sprint("full-disk-", i), Spec: sdk.TaskSpec{Argv: resultArgv}})
		require.NoError(t, err)
	}
}

// readyz asks the gateway of dir for /readyz over its socket.
func readyz(t *testing.T, dir string) (int, api.Readiness) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", gateway.SocketPath(dir))
	}}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://flowgate/readyz")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out api.Readiness
	require.NoError(t, json.Unmarshal(body, &out), "body: %s", body)
	return resp.StatusCode, out
}

// waitFor polls cond for up to 30 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), "timed out waiting: %s", what)
		time.Sleep(20 * time.Millisecond)
	}
}
