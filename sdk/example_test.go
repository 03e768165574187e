package sdk_test

import (
	"context"
	"os/exec"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/flowgate/flowgate/sdk"
)

// hello finishes every flow it is given.
type hello struct{}

func (hello) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "hello", Version: "1.0.0", APIVersion: sdk.APIVersion}, nil
}

func (hello) HandleEvent(ctx context.Context, host sdk.Host, ev sdk.Event) error {
	if ev.Type != sdk.EventFlowStarted {
		return nil
	}
	f, err := host.GetFlow(ctx, ev.FlowID)
	if err != nil {
		return err
	}
	_, err = host.Finish(ctx, f.ID, f.Revision, sdk.EndRequest{CurrentStep: "said hello"})
	return err
}

func (hello) Shutdown(context.Context) error { return nil }

// A controller plugin's whole main.
func ExampleServe() {
	sdk.Serve(hello{})
}

// How the gateway starts a controller plugin and connects it. host is the
// gateway's sdk.Host for this instance.
func ExampleConnect() {
	var host sdk.Host
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  sdk.Handshake,
		Plugins:          sdk.PluginSet(),
		Cmd:              exec.Command("/path/to/controller"),
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		SkipHostEnv:      true,
		StartTimeout:     15 * time.Second,
		Logger:           hclog.Default().Named("plugin.hello"),
	})
	rpc, err := client.Client()
	if err != nil {
		client.Kill()
		return
	}
	ctx := context.Background()
	p, err := sdk.Connect(ctx, rpc, host)
	if err != nil {
		client.Kill()
		return
	}
	_ = p.HandleEvent(ctx, sdk.Event{FlowID: "flow-1", Seq: 1, Type: sdk.EventFlowStarted})

	stop, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_ = p.Shutdown(stop)
	client.Kill()
}
