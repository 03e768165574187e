package plugintest

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/sdk"
)

// flowCase is one case run against the embedded gateway; each works on a
// flow of its own.
type flowCase struct {
	name string
	run  func(h *harness, ctx context.Context) Result
}

// flowCases run in this order after start: events-in-order first, since
// the others compare their task counts with its.
var flowCases = []flowCase{
	{"events-in-order", (*harness).inOrder},
	{"redelivery", (*harness).redelivery},
	{"stale-revision", (*harness).staleRevision},
	{"cancel", (*harness).cancel},
	{"restart", (*harness).restart},
	{"create-flow", (*harness).createFlow},
	{"watch-restart", (*harness).watchRestart},
	{"stages", (*harness).stages},
}

// outcome is a case's result for flow f: failed with err, or passed.
func (h *harness) outcome(name string, f *sdk.Flow, err error, pass string) Result {
	r := Result{Case: name, Did: h.rec.actions(f.ID)}
	if err != nil {
		r.Detail = fmt.Sprintf("flow %s: %v", f.ID, err)
		return r
	}
	r.Pass, r.Detail = true, pass
	return r
}

// endedAlike checks that flow f ended and took as many tasks as the flow
// of events-in-order: no task was created twice.
func (h *harness) endedAlike(f *sdk.Flow) error {
	if !f.Status.Terminal() {
		return fmt.Errorf("the flow is %s, not ended", f.Status)
	}
	tasks, err := h.eng.FlowTasks(f.ID)
	if err != nil {
		return err
	}
	if len(tasks) != h.tasks {
		return fmt.Errorf("the flow has %d tasks where events-in-order took %d: a task was created twice, or one is missing", len(tasks), h.tasks)
	}
	return nil
}

// inOrder drives a flow from flow.started to its end.
func (h *harness) inOrder(ctx context.Context) Result {
	const name = "events-in-order"
	f, err := h.newFlow("events in order")
	if err != nil {
		return Result{Case: name, Detail: err.Error()}
	}
	end, err := h.drive(ctx, f.ID)
	if err != nil {
		return h.outcome(name, f, err, "")
	}
	var last int64
	for _, ev := range h.rec.events(f.ID) {
		if ev.Seq <= last {
			return h.outcome(name, f, fmt.Errorf("event %d was acknowledged after event %d", ev.Seq, last), "")
		}
		last = ev.Seq
	}
	tasks, err := h.eng.FlowTasks(f.ID)
	if err != nil {
		return h.outcome(name, f, err, "")
	}
	h.tasks = len(tasks)
	return h.outcome(name, f, nil, fmt.Sprintf("the flow ended %s after %d tasks; events 1 to %d acknowledged in order", end.Status, len(tasks), last))
}

// redelivery hands the plugin events it already acknowledged, once
// mid-flow and once after the end, and checks that nothing changes.
func (h *harness) redelivery(ctx context.Context) Result {
	const name = "redelivery"
	f, err := h.newFlow("redelivery")
	if err != nil {
		return Result{Case: name, Detail: err.Error()}
	}
	if _, err := h.firstTask(ctx, f.ID); err != nil {
		return h.outcome(name, f, err, "")
	}
	if err := h.redeliverLast(ctx, f.ID); err != nil {
		return h.outcome(name, f, fmt.Errorf("mid-flow: %w", err), "")
	}
	end, err := h.drive(ctx, f.ID)
	if err == nil {
		err = h.redeliverLast(ctx, f.ID)
	}
	if err == nil {
		end, err = h.eng.GetFlow(f.ID)
	}
	if err == nil {
		err = h.endedAlike(end)
	}
	return h.outcome(name, f, err, "an event delivered again, mid-flow and after the end, was acknowledged and changed nothing")
}

// redeliverLast delivers the last event the plugin acknowledged on flowID
// again, as after a lost answer, and checks that it is acknowledged and
// that the flow's status and tasks stay as they were.
func (h *harness) redeliverLast(ctx context.Context, flowID string) error {
	evs := h.rec.events(flowID)
	if len(evs) == 0 {
		return fmt.Errorf("no event was acknowledged yet")
	}
	ev := evs[len(evs)-1]
	ev.Deliveries++
	ev.LastError = "flowgate plugins test: the answer was lost"
	before, err := h.snapshot(flowID)
	if err != nil {
		return err
	}
	handler, err := h.sup.Handler(h.name)
	if err != nil {
		return err
	}
	if err := (deliveryRecorder{r: h.rec, h: handler}).HandleEvent(ctx, ev); err != nil {
		return fmt.Errorf("event %d (%s) delivered again failed: %w", ev.Seq, ev.Type, err)
	}
	if err := h.settle(ctx, flowID); err != nil {
		return err
	}
	after, err := h.snapshot(flowID)
	if err != nil {
		return err
	}
	if after != before {
		return fmt.Errorf("event %d (%s) delivered again changed the flow: %s before, %s after", ev.Seq, ev.Type, before, after)
	}
	return nil
}

// snapshot is what a repeated event must not change: the flow's status
// and its tasks.
func (h *harness) snapshot(flowID string) (string, error) {
	f, err := h.eng.GetFlow(flowID)
	if err != nil {
		return "", err
	}
	tasks, err := h.eng.FlowTasks(flowID)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s with %d tasks", f.Status, len(tasks)), nil
}

// staleRevision makes the plugin's first guarded write stale and checks
// that it recovers: the flow still ends, with no task twice.
func (h *harness) staleRevision(ctx context.Context) Result {
	const name = "stale-revision"
	f, err := h.newFlow("stale revision")
	if err != nil {
		return Result{Case: name, Detail: err.Error()}
	}
	h.rec.makeStale(f.ID)
	end, err := h.drive(ctx, f.ID)
	if err == nil {
		err = h.endedAlike(end)
	}
	if err == nil && h.rec.conflictsOn(f.ID) == 0 {
		err = fmt.Errorf("the plugin made no write that could be made stale (UpdateFlow, SetWaiting, Resume, Finish, Fail)")
	}
	return h.outcome(name, f, err, "the plugin got revision_conflict on a stale write, and the flow still ended with no task twice")
}

// cancel cancels a flow after its first task and checks that the plugin
// starts nothing new and acknowledges what follows.
func (h *harness) cancel(ctx context.Context) Result {
	const name = "cancel"
	f, err := h.newFlow("cancel")
	if err != nil {
		return Result{Case: name, Detail: err.Error()}
	}
	if _, err := h.firstTask(ctx, f.ID); err != nil {
		return h.outcome(name, f, err, "")
	}
	before, err := h.eng.FlowTasks(f.ID)
	if err != nil {
		return h.outcome(name, f, err, "")
	}
	if _, err := h.eng.CancelFlow(f.ID, "flowgate plugins test"); err != nil {
		return h.outcome(name, f, fmt.Errorf("cancel: %w", err), "")
	}
	h.rec.note(f.ID, "(an operator cancelled the flow)")
	if err := h.settle(ctx, f.ID); err != nil {
		return h.outcome(name, f, err, "")
	}
	end, err := h.eng.GetFlow(f.ID)
	if err != nil {
		return h.outcome(name, f, err, "")
	}
	after, err := h.eng.FlowTasks(f.ID)
	switch {
	case err != nil:
	case len(after) != len(before):
		err = fmt.Errorf("the plugin created %d tasks after the cancel", len(after)-len(before))
	case end.Status != sdk.FlowCancelled:
		err = fmt.Errorf("the flow is %s, not cancelled", end.Status)
	}
	return h.outcome(name, f, err, "after the cancel the plugin started nothing, acknowledged every event, and the flow ended cancelled")
}

// restart kills the plugin process after the flow's first task and
// checks that the new process takes the flow to its end.
func (h *harness) restart(ctx context.Context) Result {
	const name = "restart"
	f, err := h.newFlow("restart")
	if err != nil {
		return Result{Case: name, Detail: err.Error()}
	}
	task, err := h.firstTask(ctx, f.ID)
	if err != nil {
		return h.outcome(name, f, err, "")
	}
	old := h.status()
	if old.PID <= 1 {
		return h.outcome(name, f, fmt.Errorf("the supervisor knows no pid of the plugin (state %s)", old.State), "")
	}
	if err := syscall.Kill(old.PID, syscall.SIGKILL); err != nil {
		return h.outcome(name, f, fmt.Errorf("kill the plugin process %d: %w", old.PID, err), "")
	}
	h.rec.note(f.ID, "(the harness killed the plugin process %d)", old.PID)
	// The task ends while the plugin is down: its task.finished waits
	// for the new process.
	if err := h.finishTask(task.ID); err != nil {
		return h.outcome(name, f, err, "")
	}
	if err := h.awaitRestart(ctx, old.Restarts); err != nil {
		return h.outcome(name, f, err, "")
	}
	now := h.status()
	h.rec.note(f.ID, "(the supervisor restarted the plugin: process %d)", now.PID)
	end, err := h.drive(ctx, f.ID)
	if err == nil {
		err = h.endedAlike(end)
	}
	return h.outcome(name, f, err, "the restarted plugin got the pending event and took the flow to its end with no task twice")
}

// status is the plugin's status in the supervisor.
func (h *harness) status() pluginhost.Status {
	return h.sup.Status(h.name)
}

// awaitRestart waits until the supervisor runs a new process of the
// plugin, after more than restarts restarts.
func (h *harness) awaitRestart(ctx context.Context, restarts int) error {
	deadline := time.Now().Add(h.cfg.Timeout)
	for {
		s := h.status()
		if s.Restarts > restarts && s.State == pluginhost.StateRunning {
			return nil
		}
		if s.State == pluginhost.StateFailed {
			return fmt.Errorf("the supervisor gave up restarting the plugin: %s", s.LastError)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the plugin was not running again within %s of its kill (state %s, last error %s)", h.cfg.Timeout, s.State, s.LastError)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
