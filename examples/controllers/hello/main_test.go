package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

func TestHello(t *testing.T) {
	sdktest.Run(t, hello{}, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("say hello", nil) // delivers flow.started
		for range 3 {
			tasks := h.Tasks(f.ID)
			last := tasks[len(tasks)-1]
			out := strings.TrimPrefix(last.Spec.Shell, "echo ") + "\n"    // what the step prints
			h.FinishTask(last.ID, sdk.TaskSucceeded, sdktest.Stdout(out)) // delivers task.finished
		}
		f = h.Flow(f.ID)
		if f.Status != sdk.FlowSucceeded {
			t.Fatalf("flow is %s", f.Status)
		}
		var state struct{ Results []string }
		if err := json.Unmarshal(f.State, &state); err != nil || strings.Join(state.Results, " ") != "hello from flowgate" {
			t.Fatalf("state is %s (%v)", f.State, err)
		}
	})
}
