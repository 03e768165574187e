package sdktest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// fetcher runs one task per flow and ends the flow with it.
type fetcher struct{}

func (fetcher) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "fetcher", Version: "0.1.0", APIVersion: sdk.APIVersion}, nil
}

func (fetcher) HandleEvent(ctx context.Context, host sdk.Host, ev sdk.Event) error {
	f, err := host.GetFlow(ctx, ev.FlowID)
	if err != nil || f.Status.Terminal() {
		return err
	}
	switch ev.Type {
	case sdk.EventFlowStarted:
		// The key makes a repeated flow.started return the same task.
		_, _, err := host.CreateTask(ctx, sdk.TaskRequest{
			FlowID: f.ID, IdempotencyKey: f.ID + ":fetch", Label: "fetch",
			Spec: sdk.TaskSpec{Argv: []string{"curl", "-fsS", "https://example.com/report"}},
		})
		if err != nil {
			return err
		}
		step := "fetch"
		_, err = host.UpdateFlow(ctx, f.ID, f.Revision, sdk.FlowUpdate{CurrentStep: &step})
		return err
	case sdk.EventTaskFinished:
		tasks, err := host.ListTasks(ctx, f.ID)
		if err != nil {
			return err
		}
		if tasks[0].Status == sdk.TaskSucceeded {
			_, err = host.Finish(ctx, f.ID, f.Revision, sdk.EndRequest{CurrentStep: "done"})
		} else {
			_, err = host.Fail(ctx, f.ID, f.Revision, sdk.EndRequest{BlockedTaskID: tasks[0].ID, BlockedSummary: "fetch " + string(tasks[0].Status)})
		}
		if errors.Is(err, sdk.ErrTerminal) {
			return nil // ended by an earlier delivery of this event
		}
		return err
	}
	return nil
}

func (fetcher) Shutdown(context.Context) error { return nil }

// The in-memory Host on its own: make a flow, hand its events to the
// controller as the gateway would, and play the runner's part.
func Example() {
	ctx := context.Background()
	host := sdktest.NewHost()
	c := fetcher{}
	deliver := func(flowID string) {
		for _, ev := range host.Events(flowID) {
			if err := c.HandleEvent(ctx, host, ev); err != nil {
				fmt.Println("event failed:", err)
				return
			}
			host.Ack(flowID, ev.Seq)
		}
	}

	f, _ := host.NewFlow("fetcher", "fetch the report", nil)
	deliver(f.ID)
	tasks, _ := host.ListTasks(ctx, f.ID)
	fmt.Println(tasks[0].Label, tasks[0].Status)

	_, _ = host.FinishTask(tasks[0].ID, sdk.TaskSucceeded)
	deliver(f.ID)
	f, _ = host.GetFlow(ctx, f.ID)
	fmt.Println(f.Status, f.CurrentStep, f.Revision)
	// Output:
	// fetch queued
	// succeeded done 3
}
