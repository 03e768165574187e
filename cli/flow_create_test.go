package cli_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/plugins"
)

// With a gateway running, tasks flow create refuses a controller the
// gateway has no plugin for (exit 2), naming the ones it has, unless
// --allow-unknown-controller; a controller it runs is created quietly.
// With no gateway nothing is known and nothing is said.
func TestFlowCreateRefusesAControllerTheGatewayDoesNotRun(t *testing.T) {
	t.Parallel()
	home := shortHome(t)
	create := func(controller string, flags ...string) (int, string) {
		code, _, errOut := run(t, home, append([]string{"tasks", "flow", "create", "--controller", controller, "--goal", "g", "--owner", "o"}, flags...)...)
		return code, errOut
	}
	code, errOut := create("later")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, errOut, "no gateway: nothing is known")

	serveGateway(t, gateway.Config{Home: home, Owner: t.Name(), Builtins: plugins.Names()})
	code, errOut = create("pipline")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, `controller "pipline" is not configured in the running gateway (it runs only pipeline), so nothing would drive the flow`)
	require.Contains(t, errOut, "add the plugin to plugins: (or plugins_dir:) in the gateway config")
	require.Equal(t, 1, flowCount(t, home), "the refused flow was not created")

	code, errOut = create("pipline", "--allow-unknown-controller")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, errOut)

	code, errOut = create("pipeline")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, errOut)
	require.Equal(t, 3, flowCount(t, home))
}
