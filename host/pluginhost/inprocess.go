package pluginhost

import (
	"context"
	"fmt"
	"os"

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

// inProcessHandlers returns the handlers of the supervisor's InProcess
// controllers, by name; a name that is also a plugin's is refused.
func (s *Supervisor) inProcessHandlers() (map[string]Handler, error) {
	hs := map[string]Handler{}
	for name, c := range s.cfg.InProcess {
		if _, dup := s.instances[name]; dup {
			return nil, fmt.Errorf("plugins: %q is both a plugin and a controller in this process; name it once", name)
		}
		// Unlike NewHost's, this host reaches the stages the supervisor's
		// plugins provide, as a plugin instance's does.
		hs[name] = inProcess{c: c, host: newHost(s.eng, name, s.cfg.Logger.Named("plugin."+name), s)}
	}
	return hs, nil
}

// inProcessStatuses describes the in-process controllers: running, in
// this process, since the supervisor was made; pending counts their
// events in the outbox.
func (s *Supervisor) inProcessStatuses(pending map[string]int) []Status {
	var out []Status
	for name := range s.inProcess {
		out = append(out, Status{Name: name, State: StateRunning, PID: os.Getpid(), Since: s.since, Pending: pending[name]})
	}
	return out
}
