package cli_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/plugins"
)

// With a gateway running, tasks flow create refuses a controller the
// gateway has no plugin for, names the ones it has, and writes nothing;
// a controller it runs is accepted. With no gateway, any name is.
func TestFlowCreateRefusesAControllerTheGatewayDoesNotRun(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	create := func(controller string) (int, string) {
		code, _, errOut := run(t, home, "tasks", "flow", "create", "--controller", controller, "--goal", "g", "--owner", "o")
		return code, errOut
	}
	code, errOut := create("later")
	require.Equal(t, 0, code, "no gateway: nothing is known, the flow waits for one: %s", errOut)

	g, err := gateway.New(gateway.Config{Home: home, Owner: t.Name(), Builtins: plugins.Names()})
	require.NoError(t, err)
	require.NoError(t, g.Start(t.Context()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, g.Stop(ctx))
	})
	code, errOut = create("pipline")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, `--controller "pipline": the running gateway has no plugin of that name (it runs only pipeline)`)
	require.Contains(t, errOut, "add the plugin to plugins: in the gateway config")
	require.Equal(t, 1, flowCount(t, home), "the refused create wrote nothing")

	code, errOut = create("pipeline")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, 2, flowCount(t, home))
}
