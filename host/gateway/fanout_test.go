package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
)

// A for_each's items run at once under the gateway: each item's task
// waits until all four have started, so items run one after another
// would never end. The rows come out in item order.
func TestForEachItemsRunAtOnceInTheGateway(t *testing.T) {
	t.Parallel()
	home, err := os.MkdirTemp("", "fgfan")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	met := filepath.Join(home, "met")
	require.NoError(t, os.Mkdir(met, 0o700))
	wf := filepath.Join(home, "fan.lobster")
	require.NoError(t, os.WriteFile(wf, []byte(`name: fan
steps:
  - id: each
    for_each: '["a", "b", "c", "d"]'
    steps:
      - id: meet
        run: touch `+met+`/$item.stdout; while [ $(ls `+met+` | wc -l) -lt 4 ]; do sleep 0.01; done; echo $item.stdout
`), 0o600))
	var fc gateway.FileConfig
	fc.Limits.MaxRunning = 4
	g, err := gateway.New(gateway.Config{
		Home: home, File: fc, Launch: testLaunch, Self: filepath.Join(home, "no-such-flowgate"),
		Controllers: map[string]func(func(string) string) sdk.Controller{flows.PipelineController: pipeline.NewFrom},
	})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, g.Start(ctx))
	t.Cleanup(func() { require.NoError(t, g.Stop(ctx)) })
	c := g.Client()
	state, err := flows.Invocation{File: wf, Cwd: home}.State()
	require.NoError(t, err)
	f, err := c.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "t", ControllerID: flows.PipelineController, Goal: "fan", State: state})
	require.NoError(t, err)
	v := waitFlow(t, c, f.ID, "the fan-out to end", func(v apitype.FlowView) bool { return v.Status.Terminal() })
	require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)
	require.Len(t, v.Tasks, 4)
	out, err := v.Output.ReadValue(nil)
	require.NoError(t, err)
	require.JSONEq(t, `[{"item":"a","index":0,"meet":"a\n"},{"item":"b","index":1,"meet":"b\n"},{"item":"c","index":2,"meet":"c\n"},{"item":"d","index":3,"meet":"d\n"}]`, string(out))
}
