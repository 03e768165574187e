package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
)

// panicker is an in-process controller that panics on the flows whose
// goal is "panic" and finishes every other flow it starts.
type panicker struct{}

func (panicker) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "panicker", APIVersion: sdk.APIVersion}, nil
}

func (panicker) Shutdown(context.Context) error { return nil }

func (panicker) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	f, err := h.GetFlow(ctx, ev.FlowID)
	if err != nil || f.Status.Terminal() {
		return err
	}
	if f.Goal == "panic" {
		panic("index out of range in flow " + f.ID)
	}
	_, err = h.Finish(ctx, f.ID, f.Revision, sdk.EndRequest{})
	return err
}

// A panic in an in-process controller blocks only the flow whose event
// caused it, with the panic's message, and logs its stack; the gateway
// stays up, the same controller goes on with its other flows, and a
// pipeline in the same gateway runs to the end.
func TestInProcessPanicBlocksOnlyItsFlow(t *testing.T) {
	t.Parallel()
	home, err := os.MkdirTemp("", "fgpanic")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	logFile, err := os.Create(filepath.Join(t.TempDir(), "gateway.log"))
	require.NoError(t, err)
	t.Cleanup(func() { logFile.Close() })
	wf := filepath.Join(home, "one.lobster")
	require.NoError(t, os.WriteFile(wf, []byte("name: one\nsteps:\n  - id: a\n    run: echo a\n"), 0o600))
	g, err := gateway.New(gateway.Config{
		Home: home, Launch: testLaunch, Self: filepath.Join(home, "no-such-flowgate"),
		Logger: hclog.New(&hclog.LoggerOptions{Output: logFile, Level: hclog.Info}),
		Controllers: map[string]func(func(string) string) sdk.Controller{
			flows.PipelineController: pipeline.NewFrom,
			"panicker":               func(func(string) string) sdk.Controller { return panicker{} },
		},
	})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, g.Start(ctx))
	t.Cleanup(func() { require.NoError(t, g.Stop(ctx)) })
	c := g.Client()

	bad, err := c.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "t", ControllerID: "panicker", Goal: "panic"})
	require.NoError(t, err)
	v := waitFlow(t, c, bad.ID, "the panicking flow to be blocked", func(v apitype.FlowView) bool { return v.Status == sdk.FlowBlocked })
	require.Contains(t, v.BlockedSummary, "controller panicker panicked handling flow.started")
	require.Contains(t, v.BlockedSummary, "index out of range in flow "+bad.ID)
	require.Contains(t, v.BlockedSummary, "unblock the flow")

	good, err := c.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "t", ControllerID: "panicker", Goal: "fine"})
	require.NoError(t, err)
	v = waitFlow(t, c, good.ID, "the controller's next flow to end", func(v apitype.FlowView) bool { return v.Status.Terminal() })
	require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)

	state, err := flows.Invocation{File: wf, Cwd: home}.State()
	require.NoError(t, err)
	p, err := c.CreateFlow(ctx, apitype.CreateFlowInput{OwnerKey: "t", ControllerID: flows.PipelineController, Goal: "one", State: state})
	require.NoError(t, err)
	v = waitFlow(t, c, p.ID, "the pipeline to end", func(v apitype.FlowView) bool { return v.Status.Terminal() })
	require.Equal(t, sdk.FlowSucceeded, v.Status, v.BlockedSummary)

	logged, err := os.ReadFile(logFile.Name())
	require.NoError(t, err)
	require.Contains(t, string(logged), "controller panicked handling an event")
	require.Contains(t, string(logged), "panic_test.go", "the stack names where the controller panicked")
}
