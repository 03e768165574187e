package gateway_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Two gateways on one machine, each with its own home, share an etcd
// installation: the second, starting, leaves the first's running task
// to it. Before, a task of a gateway on the same host was taken for the
// starting gateway's own, and with no shim in its home it was queued
// again while it still ran.
func TestGatewayLeavesAnotherHomesTaskOnTheSameMachine(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	url := "etcd://" + srv.Endpoint() + prefix
	ctx := context.Background()
	start := func() *gateway.Gateway {
		g, _ := etcdGateway(t, url)
		require.NoError(t, g.Start(ctx))
		t.Cleanup(func() { g.Stop(ctx) })
		return g
	}
	a := start()
	task, _, err := a.Client().RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "same-host", Spec: sdk.TaskSpec{Shell: "sleep 60"}})
	require.NoError(t, err)
	eng, _ := streamsEngine(t, srv, prefix)
	t.Cleanup(func() { eng.CancelTask(task.ID) })
	var ran *stored.Task
	polltest.Until(t, "the task to run under gateway a", func() bool {
		ran, err = eng.GetTask(task.ID)
		return err == nil && ran.Status == sdk.TaskRunning && ran.Gateway != ""
	})

	start() // its runner's recovery is part of its start
	got, err := eng.GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status, "the second gateway settled the first's task: %v", got.Errors)
	require.Equal(t, 1, got.Attempts)
	require.Equal(t, ran.Gateway, got.Gateway)
}
