package flowrule

import (
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/sdk"
)

// AdvanceTasks checks the tasks of an Advance of flow flowID and returns
// them, each with FlowID set to flowID. It refuses, with sdk.ErrInvalid
// and changing nothing: a request with no task (UpdateFlow is the call
// that changes a flow alone), a task that names another flow, and two
// tasks with the same idempotency key.
func AdvanceTasks(flowID string, a sdk.AdvanceRequest) ([]sdk.TaskRequest, error) {
	if len(a.Tasks) == 0 {
		return nil, fmt.Errorf("%w: advance of flow %s creates no task; send at least one, or change the flow alone with UpdateFlow", sdk.ErrInvalid, flowID)
	}
	out := make([]sdk.TaskRequest, len(a.Tasks))
	keys := make(map[string]int, len(a.Tasks))
	for i, req := range a.Tasks {
		if id := strings.TrimSpace(req.FlowID); id != "" && id != flowID {
			return nil, fmt.Errorf("%w: advance of flow %s: task %d names flow %s; an advance creates tasks in its own flow only (leave flow_id empty)", sdk.ErrInvalid, flowID, i, id)
		}
		key := strings.TrimSpace(req.IdempotencyKey)
		if j, dup := keys[key]; dup && key != "" {
			return nil, fmt.Errorf("%w: advance of flow %s: tasks %d and %d have the same idempotency key %q; give each task its own", sdk.ErrInvalid, flowID, j, i, key)
		}
		keys[key] = i
		req.FlowID = flowID
		out[i] = req
	}
	return out, nil
}

// Changes reports whether u sets any field: an Advance whose update sets
// none leaves the flow's record, and so its revision, as it is.
func Changes(u sdk.FlowUpdate) bool {
	return u.State != nil || u.Wait != nil || u.CurrentStep != nil || u.BlockedTaskID != nil || u.BlockedSummary != nil
}
