package pluginhost

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"slices"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// InProcess returns the Handler of a controller that runs in this process
// rather than as a plugin: each event goes to c.HandleEvent directly, with
// the host NewHost gives it, so the controller makes the same engine calls
// and meets the same refusals as a plugin instance, without a process or
// a connection. A panic in c is recovered per event (see PanicError).
// log receives the controller's Log calls and its panics; if nil, they
// are discarded.
func InProcess(eng *engine.Engine, name string, c sdk.Controller, log hclog.Logger) Handler {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return inProcess{name: name, c: c, host: NewHost(eng, name, log), log: log, folds: folds(c)}
}

type inProcess struct {
	name  string
	c     sdk.Controller
	host  sdk.Host
	log   hclog.Logger
	folds bool
}

func (p inProcess) foldsTaskFinished() bool { return p.folds }

// folds reports whether c declares sdk.CapabilityFoldTaskFinished; a
// controller whose Info fails is handed every event.
func folds(c sdk.Controller) bool {
	info, err := c.Info(context.Background())
	return err == nil && slices.Contains(info.Capabilities, sdk.CapabilityFoldTaskFinished)
}

// PanicError is how an in-process controller's panic ends the delivery of
// an event: the panic is recovered, so the gateway and the other flows go
// on, and the deliverer blocks the event's flow at once with Error as its
// summary, since delivering the same event again would panic again. The
// stack goes to the controller's log.
type PanicError struct {
	Controller string
	Event      sdk.Event
	// Value is what the controller panicked with, as text.
	Value string
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("controller %s panicked handling %s (event %d) of flow %s: %s", e.Controller, e.Event.Type, e.Event.Seq, e.Event.FlowID, e.Value)
}

// HandleEvent hands ev to the controller, turning a panic into a
// *PanicError.
func (p inProcess) HandleEvent(ctx context.Context, ev sdk.Event) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Controller: p.name, Event: ev, Value: fmt.Sprint(v)}
			p.log.Error("controller panicked handling an event; its flow is blocked", "flow", ev.FlowID, "seq", ev.Seq, "type", ev.Type,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		}
	}()
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
		log := s.cfg.Logger.Named("plugin." + name)
		hs[name] = inProcess{name: name, c: c, host: newHost(s.eng, name, log, s), log: log, folds: folds(c)}
	}
	return hs, nil
}

// inProcessStatuses describes the in-process controllers: running, in
// this process, since the supervisor was made; pending counts their
// events in the outbox.
func (s *Supervisor) inProcessStatuses(pending map[string]int) []Status {
	var out []Status
	for name := range s.inProcess {
		out = append(out, Status{Name: name, State: StateRunning, PID: os.Getpid(), Since: s.since, Pending: pending[name], InProcess: true})
	}
	return out
}
