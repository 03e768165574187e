package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/internal/grpctest"
	"github.com/flowgate/flowgate/sdk/pluginclient"
)

// maxDrain bounds the events one Drain delivers: a controller that queues
// an event for every event it handles never lets its flow settle.
const maxDrain = 1000

// shutdownTimeout bounds the controller's Shutdown at the end of a test,
// as the gateway bounds it before it kills a plugin.
const shutdownTimeout = 2 * time.Second

// Harness drives one controller against an in-memory Host, the way the
// gateway would: it makes flows, finishes tasks and delivers the events
// that follow, in order per flow, acknowledging each one the controller
// handled. Helpers fail the test on unexpected errors. At the end of the
// test it calls the controller's Shutdown and fails the test if that
// fails. A Harness is not safe for concurrent use.
type Harness struct {
	t            testing.TB
	host         *Host
	controllerID string
	deliver      func(ctx context.Context, ev sdk.Event) error
	runStage     func(ctx context.Context, call sdk.StageCall) (json.RawMessage, error)
}

// New returns a harness that calls c in-process, handing it the harness's
// Host directly.
func New(t testing.TB, c sdk.Controller) *Harness {
	t.Helper()
	h := &Harness{t: t, host: NewHost()}
	h.deliver = func(ctx context.Context, ev sdk.Event) error { return c.HandleEvent(ctx, h.host, ev) }
	h.runStage = func(ctx context.Context, call sdk.StageCall) (json.RawMessage, error) {
		sp, ok := c.(sdk.StageProvider)
		if !ok {
			return nil, fmt.Errorf("controller does not implement sdk.StageProvider; add a RunStage method to run stage %s", call.Name)
		}
		return sp.RunStage(ctx, h.host, call)
	}
	h.start(c.Info, c.Shutdown)
	return h
}

// newWire returns a harness that reaches c through the real protocol:
// go-plugin's in-process gRPC connection, pluginclient.Connect, and the
// Host served back to c on its unix socket over one connection.
func newWire(t testing.TB, c sdk.Controller) *Harness {
	t.Helper()
	client := grpctest.GRPCConn(t, pluginclient.ServePluginSet(c))
	// Close stops the server too (go-plugin's Shutdown RPC); a second
	// Stop would race inside go-plugin.
	t.Cleanup(func() { _ = client.Close() })
	h := &Harness{t: t, host: NewHost()}
	p, err := pluginclient.Connect(t.Context(), client, h.host)
	if err != nil {
		t.Fatalf("sdktest: connect the controller over gRPC: %v", err)
	}
	h.deliver = p.HandleEvent
	h.runStage = p.RunStage
	h.start(p.Info, p.Shutdown)
	return h
}

// start reads the controller's name for the flows the harness makes and
// arranges its Shutdown at the end of the test.
func (h *Harness) start(info func(context.Context) (sdk.Info, error), shutdown func(context.Context) error) {
	h.t.Helper()
	i, err := info(h.t.Context())
	if err != nil {
		h.t.Fatalf("sdktest: controller Info: %v", err)
	}
	h.controllerID = i.Name
	if h.controllerID == "" {
		h.controllerID = "sdktest"
	}
	h.host.SetController(h.controllerID)
	h.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			h.t.Errorf("sdktest: controller Shutdown: %v", err)
		}
	})
}

// Run runs test twice, one after the other, as subtests: "in-process"
// with New, and "grpc" with a harness that reaches c through the real
// protocol (go-plugin's in-process gRPC connection, and the Host served
// back on its unix socket over one connection), so a controller is tested on the
// wire it will run on. c must not keep state between the two runs.
func Run(t *testing.T, c sdk.Controller, test func(t *testing.T, h *Harness)) {
	t.Run("in-process", func(t *testing.T) { test(t, New(t, c)) })
	t.Run("grpc", func(t *testing.T) { test(t, newWire(t, c)) })
}

// Host returns the harness's in-memory Host, to play the gateway's or an
// operator's part directly (Resume an approval, RequestCancel, StartTask)
// or to read Logs. Follow a change that queues events with Drain.
func (h *Harness) Host() *Host { return h.host }

// StartFlow makes a managed flow of the controller with goal and initial
// state, delivers flow.started and whatever that leads to, and returns the
// flow as the controller left it. state is stored as its JSON; nil leaves
// it absent, and a json.RawMessage is taken as it is.
func (h *Harness) StartFlow(goal string, state any) *sdk.Flow {
	h.t.Helper()
	var raw json.RawMessage
	if state != nil {
		var err error
		if raw, err = json.Marshal(state); err != nil {
			h.t.Fatalf("sdktest: encode the state of flow %q: %v", goal, err)
		}
	}
	f, err := h.host.NewFlow(h.controllerID, goal, raw)
	if err != nil {
		h.t.Fatalf("sdktest: create flow %q: %v", goal, err)
	}
	h.Drain(f.ID)
	return h.Flow(f.ID)
}

// FinishTask ends task taskID in status with what opts say it produced
// (see Host.FinishTask, Stdout and Result), delivers task.finished and
// whatever that leads to, and returns the task.
func (h *Harness) FinishTask(taskID string, status sdk.TaskStatus, opts ...FinishOption) *sdk.Task {
	h.t.Helper()
	t, err := h.host.FinishTask(taskID, status, opts...)
	if err != nil {
		h.t.Fatalf("sdktest: finish task %s: %v", taskID, err)
	}
	h.Drain(t.FlowID)
	return t
}

// FireWakes fires the wakes the controller set that are due at now (see
// Host.FireWakes) and delivers the flow.woken events, and whatever they
// lead to, as Drain does.
func (h *Harness) FireWakes(now time.Time) {
	h.t.Helper()
	for _, id := range h.host.FireWakes(now) {
		h.Drain(id)
	}
}

// Drain delivers the queued events of flow flowID in order, acknowledging
// each, until none is left. The test fails if the controller returns an
// error (use Deliver to test failures) or keeps queueing events.
func (h *Harness) Drain(flowID string) {
	h.t.Helper()
	for range maxDrain {
		evs := h.host.Events(flowID)
		if len(evs) == 0 {
			return
		}
		ev := evs[0]
		if err := h.Deliver(ev); err != nil {
			h.t.Fatalf("sdktest: controller failed event %d (%s) of flow %s: %v", ev.Seq, ev.Type, ev.FlowID, err)
		}
		h.host.Ack(flowID, ev.Seq)
	}
	h.t.Fatalf("sdktest: flow %s still has events after %d deliveries; does the controller queue an event for every event?", flowID, maxDrain)
}

// Deliver hands ev to the controller once, with the gateway's default
// deadline, and returns what the controller returned. It does not touch
// the outbox.
func (h *Harness) Deliver(ev sdk.Event) error {
	ctx, cancel := context.WithTimeout(h.t.Context(), sdk.DefaultEventTimeout)
	defer cancel()
	return h.deliver(ctx, ev)
}

// RunStage asks the controller to run its stage name over items with
// args (Lobster's args object; nil is {}), as the gateway does for a
// pipeline of flow flowID, and returns the stage's output JSON and error.
// The call's Key is flowID + ":" + name.
func (h *Harness) RunStage(flowID, name string, args map[string]any, items []any) (json.RawMessage, error) {
	h.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	if items == nil {
		items = []any{}
	}
	a, err := json.Marshal(args)
	if err != nil {
		h.t.Fatalf("sdktest: encode the args of stage %s: %v", name, err)
	}
	in, err := json.Marshal(items)
	if err != nil {
		h.t.Fatalf("sdktest: encode the items of stage %s: %v", name, err)
	}
	ctx, cancel := context.WithTimeout(h.t.Context(), sdk.DefaultEventTimeout)
	defer cancel()
	return h.runStage(ctx, sdk.StageCall{FlowID: flowID, Key: flowID + ":" + name, Name: name, Args: a, Items: in})
}

// Flow returns flow id as it is now.
func (h *Harness) Flow(id string) *sdk.Flow {
	h.t.Helper()
	f, err := h.host.GetFlow(context.Background(), id)
	if err != nil {
		h.t.Fatalf("sdktest: %v", err)
	}
	return f
}

// Tasks returns the tasks of flow flowID, oldest first.
func (h *Harness) Tasks(flowID string) []*sdk.Task {
	h.t.Helper()
	tasks, err := h.host.ListTasks(context.Background(), flowID)
	if err != nil {
		h.t.Fatalf("sdktest: %v", err)
	}
	return tasks
}
