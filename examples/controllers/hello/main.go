// Command hello is a complete flowgate controller plugin: it runs three
// tasks one after another, records each one's output in the flow's state,
// and finishes the flow. See README.md for how to build and use it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/flowgate/flowgate/sdk"
)

// steps are the commands hello runs, in order.
var steps = []string{"echo hello", "echo from", "echo flowgate"}

type hello struct{}

func (hello) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "hello", Version: "1.0.0", APIVersion: sdk.APIVersion}, nil
}

func (hello) Shutdown(context.Context) error { return nil }

// HandleEvent may see any event more than once, so it derives what to do
// from the flow's tasks each time, and names every task with an
// idempotency key so that a repeated create returns the first task.
func (hello) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	if ev.Type != sdk.EventFlowStarted && ev.Type != sdk.EventTaskFinished {
		return nil
	}
	flow, err := h.GetFlow(ctx, ev.FlowID)
	if err != nil || flow.Status.Terminal() {
		return err
	}
	if flow.Status == sdk.FlowQueued { // first event: the work begins
		if flow, err = h.Resume(ctx, flow.ID, flow.Revision, sdk.ResumeRequest{Status: sdk.FlowRunning}); err != nil {
			return err
		}
	}
	tasks, err := h.ListTasks(ctx, flow.ID)
	if err != nil {
		return err
	}
	var results []string
	for _, t := range tasks {
		switch {
		case t.Status == sdk.TaskSucceeded:
			results = append(results, t.Result.Summary)
		case t.Status.Terminal():
			_, err := h.Fail(ctx, flow.ID, flow.Revision, sdk.EndRequest{BlockedTaskID: t.ID, BlockedSummary: t.Title() + " " + string(t.Status)})
			return err
		default:
			return nil // a step is still running; its task.finished comes later
		}
	}
	state, _ := json.Marshal(map[string][]string{"results": results})
	if len(results) == len(steps) {
		_, err := h.Finish(ctx, flow.ID, flow.Revision, sdk.EndRequest{State: state})
		return err
	}
	if _, err := h.UpdateFlow(ctx, flow.ID, flow.Revision, sdk.FlowUpdate{State: state}); err != nil && !errors.Is(err, sdk.ErrRevisionConflict) {
		return err
	}
	n := len(results)
	_, _, err = h.CreateTask(ctx, sdk.TaskRequest{
		FlowID: flow.ID, IdempotencyKey: fmt.Sprintf("%s:step-%d", flow.ID, n),
		Label: fmt.Sprintf("step %d", n+1), Spec: sdk.TaskSpec{Shell: steps[n]},
	})
	return err
}

func main() { sdk.Serve(hello{}) }
