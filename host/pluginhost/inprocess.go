package pluginhost

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// InProcess returns the Handler of a controller that runs in this process
// rather than as a plugin: each event goes to c.HandleEvent directly, with
// the host NewHost gives it, so the controller makes the same engine calls
// and meets the same refusals as a plugin instance, without a process or
// a connection. The CLI uses it for the first-party controllers of a
// gateway it hosts for one command. log receives the controller's Log
// calls; if nil, they are discarded.
func InProcess(eng *engine.Engine, name string, c sdk.Controller, log hclog.Logger) Handler {
	return inProcess{c: c, host: NewHost(eng, name, log)}
}

type inProcess struct {
	c    sdk.Controller
	host sdk.Host
}

func (p inProcess) HandleEvent(ctx context.Context, ev sdk.Event) error {
	return p.c.HandleEvent(ctx, p.host, ev)
}
