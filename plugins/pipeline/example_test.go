package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// A pipeline flow with an approval gate, driven by hand against the
// in-memory host: the flow waits at the gate, a decision is recorded in
// state.decisions and the flow resumed, and the next step's task runs.
func Example() {
	ctx := context.Background()
	host := sdktest.NewHost()
	c := pipeline.New()
	deliver := func(flowID string) {
		for _, ev := range host.Events(flowID) {
			if err := c.HandleEvent(ctx, host, ev); err != nil {
				fmt.Println("event failed:", err)
				return
			}
			host.Ack(flowID, ev.Seq)
		}
	}

	file, _ := filepath.Abs("testdata/approver.lobster")
	state, _ := json.Marshal(map[string]any{"file": file, "args": map[string]any{}, "cwd": "/tmp"})
	f, _ := host.NewFlow(pipeline.Name, "release", state)
	deliver(f.ID)
	f, _ = host.GetFlow(ctx, f.ID)
	var wait struct{ Kind, Step, Prompt string }
	_ = json.Unmarshal(f.Wait, &wait)
	fmt.Println(f.Status, wait.Kind, wait.Step, wait.Prompt)

	// What flowgate approve does: record the decision, resume the flow.
	var st map[string]any
	_ = json.Unmarshal(f.State, &st)
	st["decisions"] = map[string]any{"gate": map[string]any{"approved": true, "by": "alice", "at": "2026-01-02T03:04:05Z"}}
	state, _ = json.Marshal(st)
	f, _ = host.UpdateFlow(ctx, f.ID, f.Revision, sdk.FlowUpdate{State: state})
	_, _ = host.Resume(ctx, f.ID, f.Revision, sdk.ResumeRequest{Status: sdk.FlowRunning})
	deliver(f.ID)
	tasks, _ := host.ListTasks(ctx, f.ID)
	fmt.Println(tasks[0].Label, tasks[0].Spec.Shell, tasks[0].Status)

	_, _ = host.FinishTask(tasks[0].ID, sdk.TaskSucceeded)
	deliver(f.ID)
	f, _ = host.GetFlow(ctx, f.ID)
	fmt.Println(f.Status)
	// Output:
	// waiting approval gate Release?
	// release echo released queued
	// succeeded
}
