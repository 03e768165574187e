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
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/fulldisk"
	"github.com/flowgate/flowgate/sdk"
)

// fullDiskTasks is the pending work: as many as the red team's flows.
const fullDiskTasks = 54

// resultArgv prints a 4 KiB JSON result, which the task's record keeps: a
// task's end needs room in the store.
var resultArgv = []string{"/bin/sh", "-c", `printf '"%04096d"' 0`}

// A gateway started with pending work on a full disk (a small tmpfs filled
// up by a filler file) neither spins nor floods its log: over a window of a
// few seconds it tries a bounded number of commits and logs a bounded
// number of lines (counts, not timings: a slower machine only makes
// fewer). Its status and /readyz say "store not writable: disk full" (or
// "task files not writable: …" when those fail first). Once
// the filler is removed it notices by itself, with no restart, and runs
// every task to success.
//
// Either the store file alone is on the small disk (bound to a file there),
// so the store is what runs out of space, or the whole home is, task logs
// included.
func TestGatewayOnAFullDiskHoldsBackAndResumes(t *testing.T) {
	for _, tc := range []struct {
		name, problem string
		size          int64
		home          func(t *testing.T, disk string) string
	}{
		{"store on the full disk", "store not writable: disk full", 2 << 20, func(t *testing.T, disk string) string {
			dir, err := os.MkdirTemp("", "fgfull") // short: the socket path is bounded
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(dir) })
			require.NoError(t, home.Ensure(dir))
			// A store file is never empty: make a real one to bind.
			st, err := store.Open(filepath.Join(disk, home.DBFile), store.Options{})
			require.NoError(t, err)
			require.NoError(t, st.Close())
			fulldisk.BindFile(t, filepath.Join(disk, home.DBFile), filepath.Join(dir, home.DBFile))
			return dir
		}},
		// The task files or the store, whichever fails first. Once
		// freed, the disk must hold every task's files (about 30 KiB
		// each), or the work runs out of space again.
		{"whole home on the full disk", "not writable: disk full", 8 << 20, func(t *testing.T, disk string) string {
			require.NoError(t, home.Ensure(disk))
			return disk
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			disk := fulldisk.Mount(t, tc.size)
			dir := tc.home(t, disk)
			queueTasks(t, dir, fullDiskTasks)
			filler := fulldisk.Fill(t, disk)
			holdsBackAndResumes(t, dir, filler, tc.problem)
		})
	}
}

// holdsBackAndResumes starts a gateway on dir, whose disk filler fills, and
// checks what TestGatewayOnAFullDiskHoldsBackAndResumes says; problem is
// what status and /readyz must say meanwhile.
func holdsBackAndResumes(t *testing.T, dir string, filler *fulldisk.Filler, problem string) {
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
	polltest.Until(t, "the gateway reports the disk full", func() bool { return strings.Contains(status().Problem(), problem) })
	writes := func(st api.GatewayStatus) int64 { return st.Store.Attempts + st.TaskFiles.Attempts }
	start, lines := writes(status()), logs.Lines()
	time.Sleep(3 * time.Second) // the window over which writes and lines are counted
	st := status()
	attempts, logged := writes(st)-start, logs.Lines()-lines
	t.Logf("on the full disk, in the window: %d writes tried, %d log lines", attempts, logged)
	require.LessOrEqual(t, attempts, int64(120), "writes tried on a full disk in the window (a busy loop tries thousands)")
	require.LessOrEqual(t, logged, 20, "log lines on a full disk in the window:\n%s", logs.String())
	require.Less(t, st.Tasks[sdk.TaskSucceeded], fullDiskTasks, "the disk was full before the work could finish")
	// A commit that fits in pages the store freed itself may still succeed
	// now and then: wait for the state rather than expect it at one instant.
	polltest.Until(t, "/readyz says the store is not writable", func() bool {
		code, ready := readyz(t, dir)
		return code == http.StatusServiceUnavailable && strings.Contains(ready.Problem, problem)
	})

	filler.Free(t)
	polltest.Until(t, "every task succeeded once space returned", func() bool {
		return status().Tasks[sdk.TaskSucceeded] == fullDiskTasks
	}, polltest.Explain(func() string { return unfinished(t, c) + "\n" + logs.String() }))
	require.Empty(t, status().Problem(), "the gateway noticed by itself")
	code, ready := readyz(t, dir)
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

// unfinished lists the tasks of c that did not succeed, with their errors.
func unfinished(t *testing.T, c api.Client) string {
	page, err := c.ListTasks(context.Background(), apitype.TaskFilter{Limit: 100})
	require.NoError(t, err)
	var out []string
	for _, tk := range page.Tasks {
		if tk.Status != sdk.TaskSucceeded {
			out = append(out, fmt.Sprintf("%s %s attempts %d errors %q", tk.ID, tk.Status, tk.Attempts, tk.Errors))
		}
	}
	return strings.Join(out, "\n")
}
