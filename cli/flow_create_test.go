package cli_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/plugins"
)

// With a gateway running, tasks flow create warns about a controller the
// gateway has no plugin for, naming the ones it has; a controller it runs
// draws no warning. With no gateway nothing is known and nothing is said.
func TestFlowCreateWarnsOfAControllerTheGatewayDoesNotRun(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	create := func(controller string) (int, string) {
		code, _, errOut := run(t, home, "tasks", "flow", "create", "--controller", controller, "--goal", "g", "--owner", "o")
		return code, errOut
	}
	code, errOut := create("later")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, errOut, "no gateway: nothing is known")

	g, err := gateway.New(gateway.Config{Home: home, Owner: t.Name(), Builtins: plugins.Names()})
	require.NoError(t, err)
	require.NoError(t, g.Start(t.Context()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, g.Stop(ctx))
	})
	code, errOut = create("pipline")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, `warning: --controller "pipline": the running gateway has no plugin of that name (it runs only pipeline), so nothing will drive this flow`)
	require.Contains(t, errOut, "add the plugin to plugins: in the gateway config")

	code, errOut = create("pipeline")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, errOut)
	require.Equal(t, 3, flowCount(t, home))
}
