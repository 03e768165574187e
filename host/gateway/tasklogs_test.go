package gateway_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/sdk"
)

// logsPage fetches the run center's log page of task from the gateway g.
func logsPage(t *testing.T, g *gateway.Gateway, task *sdk.Task) string {
	t.Helper()
	resp, err := http.Get("http://" + g.HTTPAddr() + "/flows/" + task.FlowID + "/logs?task=" + task.ID)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	return string(body)
}

// The run center of one gateway shows the log of a task another gateway
// ran: from that gateway's home when it is a member on this machine, and
// otherwise a message that names the host and the gateway that hold the
// log, in place of the log. Before, the page read only its own home and
// showed an empty log.
func TestRunCenterShowsTheLogOfAnotherGatewaysTask(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	url := "etcd://" + srv.Endpoint() + prefix
	ctx := context.Background()
	start := func() *gateway.Gateway {
		g, _ := etcdGateway(t, url, func(fc *gateway.FileConfig) { fc.HTTP.Addr = "127.0.0.1:0" })
		require.NoError(t, g.Start(ctx))
		t.Cleanup(func() { g.Stop(ctx) })
		return g
	}
	a := start()
	task, _, err := a.Client().RunTask(ctx, engine.CreateTaskInput{OwnerKey: "logs", Spec: sdk.TaskSpec{Shell: "echo written-by-$((40+2))"}})
	require.NoError(t, err)
	waitFor(t, "a to run the task", func() bool {
		got, err := a.Client().ResolveTask(ctx, task.ID)
		return err == nil && got.Status == sdk.TaskSucceeded
	})
	b := start()
	require.Contains(t, logsPage(t, b, task), "written-by-42", "b shows the log of a's task from a's home")

	// A task of a gateway on another machine: its log cannot be read here.
	eng, direct := streamsEngine(t, srv, prefix)
	far, err := direct.Join(ctx, etcd.MemberInfo{ID: "far.9", Host: "far", Address: "10.9.9.9:7070"}, 60, nil)
	require.NoError(t, err)
	remote, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "logs", Spec: sdk.TaskSpec{Shell: "true", On: "no-gateway-here"}})
	require.NoError(t, err)
	remote, err = eng.StartTask(remote.ID, engine.StartInput{Gateway: "far.9"})
	require.NoError(t, err)
	page := logsPage(t, b, remote)
	require.Contains(t, page, "the log of this task is on host far (gateway far.9), which is not reachable from here")
	require.Contains(t, page, "10.9.9.9:7070", "it names the run center that has the log")
	require.NoError(t, far.Leave())
	require.Contains(t, logsPage(t, b, remote), "that gateway left the installation")
}
