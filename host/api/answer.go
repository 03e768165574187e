package api

import (
	"fmt"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// checkAnswer refuses a success answer that decoded but lacks the record
// the request is for: a 200 with `{}` or `null` where a task, flow or job
// belongs. Callers dereference what a call returns, so an empty answer
// must be an error here, never a nil record there. Answers that are
// reports or lists are complete when empty and pass.
func checkAnswer(out any) error {
	var missing string
	switch v := out.(type) {
	case **stored.Task:
		if *v == nil || (*v).ID == "" {
			missing = "task"
		}
	case **sdk.Flow:
		if *v == nil || (*v).ID == "" {
			missing = "flow"
		}
	case *runTaskResponse:
		if v.Task == nil || v.Task.ID == "" {
			missing = "task"
		}
	case *apitype.FlowView:
		if v.Flow == nil || v.ID == "" {
			missing = "flow"
		}
	case *apitype.CancelResult:
		if v.Flow == nil || v.Flow.ID == "" {
			missing = "flow"
		}
	case *apitype.CronJob:
		if v.ID == "" {
			missing = "job"
		}
	case *apitype.CronRun:
		if v.JobID == "" {
			missing = "run"
		}
	}
	if missing != "" {
		return fmt.Errorf("it carries no %s", missing)
	}
	return nil
}
