package gateway_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// logsPage fetches the run center's log page of task from the gateway g.
func logsPage(t *testing.T, g *gateway.Gateway, task *stored.Task) string {
	t.Helper()
	resp, err := http.Get("http://" + g.HTTPAddr() + "/flows/" + task.FlowID + "/logs?task=" + task.ID)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	return string(body)
}

// remoteTask is a running task of member gateway, which a fake member
// joined as with info, made through eng; no gateway of the test takes it
// (it asks for a label none carries).
func remoteTask(t *testing.T, eng *engine.Engine, direct *etcd.Store, info etcd.MemberInfo) (*stored.Task, *etcd.Member) {
	t.Helper()
	m, err := direct.Join(context.Background(), info, 60, nil)
	require.NoError(t, err)
	t.Cleanup(func() { m.Leave(context.Background()) })
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "logs", Spec: sdk.TaskSpec{Shell: "true", On: "no-gateway-here"}})
	require.NoError(t, err)
	task, err = eng.StartTask(task.ID, engine.StartInput{Gateway: info.ID})
	require.NoError(t, err)
	return task, m
}

// The run center of one gateway shows the log of a task another gateway
// ran: from that gateway's home when it is a member on this machine,
// from its run center when it is on another machine, and otherwise a
// message that names the host and the gateway that hold the log, in
// place of the log. Before, the page read only its own home and showed
// an empty log.
func TestRunCenterShowsTheLogOfAnotherGatewaysTask(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	url := "etcd://" + srv.Endpoint() + prefix
	ctx := context.Background()
	start := func() (*gateway.Gateway, string) {
		g, home := etcdGateway(t, url, func(fc *gateway.FileConfig) { fc.HTTP.Addr = "127.0.0.1:0" })
		require.NoError(t, g.Start(ctx))
		t.Cleanup(func() { g.Stop(ctx) })
		return g, home
	}
	a, _ := start()
	task, _, err := a.Client().RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "logs", Spec: sdk.TaskSpec{Shell: "echo written-by-$((40+2))"}})
	require.NoError(t, err)
	polltest.Until(t, "a to run the task", func() bool {
		got, err := a.Client().ResolveTask(ctx, task.ID)
		return err == nil && got.Status == sdk.TaskSucceeded
	})
	b, homeB := start()
	require.Contains(t, logsPage(t, b, task), "written-by-42", "b shows the log of a's task from a's home")

	// A gateway on another machine whose run center listens on every
	// interface: its host name (here 127.0.0.1) and port reach it. b
	// plays it, with the log in its home.
	eng, direct := streamsEngine(t, srv, prefix)
	_, port, err := net.SplitHostPort(b.HTTPAddr())
	require.NoError(t, err)
	fetched, _ := remoteTask(t, eng, direct, etcd.MemberInfo{ID: "far.8", Host: "127.0.0.1", Address: "0.0.0.0:" + port})
	dir := runner.LogDir(homeB, fetched.ID, 1)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stdout"), []byte("fetched-from-far\n"), 0o600))
	require.Contains(t, logsPage(t, a, fetched), "fetched-from-far", "a asks the run center of the gateway that ran it")

	// One whose run center does not answer, one whose run center only its
	// own machine reaches, and one that left.
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, shut, _ := net.SplitHostPort(closed.Addr().String())
	closed.Close()
	down, _ := remoteTask(t, eng, direct, etcd.MemberInfo{ID: "far.9", Host: "127.0.0.1", Address: "0.0.0.0:" + shut})
	page := logsPage(t, b, down)
	require.Contains(t, page, "the log of this task is on host far (gateway far.9), which is not reachable from here")
	require.Contains(t, page, "asking its run center at http://127.0.0.1:"+shut+" failed")
	local, m := remoteTask(t, eng, direct, etcd.MemberInfo{ID: "far.7", Host: "far", Address: "127.0.0.1:7070"})
	require.Contains(t, logsPage(t, b, local), "its run center listens on 127.0.0.1:7070, which only its own machine reaches; run flowgate tasks logs on that host")
	require.NoError(t, m.Leave(context.Background()))
	require.Contains(t, logsPage(t, b, local), "that gateway left the installation; run flowgate tasks logs on that host")
}
