package pluginclient_test

import (
	"context"
	"os/exec"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/pluginclient"
)

// How the gateway starts a controller plugin and connects it. host is the
// gateway's sdk.Host for this instance.
func ExampleConnect() {
	var host sdk.Host
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginclient.Handshake(),
		Plugins:          pluginclient.PluginSet(),
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
	p, err := pluginclient.Connect(ctx, rpc, host)
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
