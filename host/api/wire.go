package api

import (
	"encoding/json"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// The wire shapes of the HTTP/JSON API. engine's inputs and pages are Go
// API without JSON tags, so their JSON spelling (snake_case) lives here, and
// the handler and Remote convert at this one seam. Records (sdk.Flow,
// sdk.Task, apitype.FlowView, apitype.CancelResult, apitype.FlowCounts,
// GatewayStatus) already carry tags and travel as they are.

// taskPageJSON is apitype.TaskPage on the wire. Tasks is [] when empty.
type taskPageJSON struct {
	Tasks   []*stored.Task          `json:"tasks"`
	Next    string                  `json:"next,omitempty"`
	Damaged []apitype.DamagedRecord `json:"damaged,omitempty"`
}

func taskPageToWire(p apitype.TaskPage) taskPageJSON {
	if p.Tasks == nil {
		p.Tasks = []*stored.Task{}
	}
	return taskPageJSON{Tasks: p.Tasks, Next: p.Next, Damaged: p.Damaged}
}

func (p taskPageJSON) page() apitype.TaskPage {
	return apitype.TaskPage{Tasks: p.Tasks, Next: p.Next, Damaged: p.Damaged}
}

// flowViewPageJSON is apitype.FlowViewPage on the wire. Flows is [] when
// empty.
type flowViewPageJSON struct {
	Flows   []apitype.FlowView      `json:"flows"`
	Next    string                  `json:"next,omitempty"`
	Damaged []apitype.DamagedRecord `json:"damaged,omitempty"`
}

func flowViewPageToWire(p apitype.FlowViewPage) flowViewPageJSON {
	if p.Flows == nil {
		p.Flows = []apitype.FlowView{}
	}
	return flowViewPageJSON{Flows: p.Flows, Next: p.Next, Damaged: p.Damaged}
}

func (p flowViewPageJSON) page() apitype.FlowViewPage {
	return apitype.FlowViewPage{Flows: p.Flows, Next: p.Next, Damaged: p.Damaged}
}

// runTaskRequest is the body of POST /v1/tasks: apitype.CreateTaskInput,
// field for field, so the two convert into each other.
type runTaskRequest struct {
	FlowID         string         `json:"flow_id,omitempty"`
	OwnerKey       string         `json:"owner_key,omitempty"`
	Runtime        string         `json:"runtime,omitempty"`
	Label          string         `json:"label,omitempty"`
	Spec           sdk.TaskSpec   `json:"spec"`
	IdempotencyKey string         `json:"idempotency_key,omitempty"`
	Status         sdk.TaskStatus `json:"status,omitempty"`
	// HeldEnv carries the secret and inherited values the gateway holds
	// in memory for the task; it is never stored.
	HeldEnv        map[string]string `json:"held_env,omitempty"`
	Budget         *sdk.Budget       `json:"budget,omitempty"`
	DetachedBudget bool              `json:"detached_budget,omitempty"`
	// DetachedNoProgress: see apitype.CreateTaskInput.
	DetachedNoProgress bool `json:"detached_no_progress,omitempty"`
}

// runTaskResponse is the answer to POST /v1/tasks.
type runTaskResponse struct {
	Task    *stored.Task `json:"task"`
	Created bool         `json:"created"`
}

// cancelFlowRequest is the body of POST /v1/flows/{id}/cancel: who asks
// for the cancel. The body is optional; without one the cancel is by
// engine.CancelByOperator.
type cancelFlowRequest struct {
	By string `json:"by,omitempty"`
}

// createFlowRequest is the body of POST /v1/flows: apitype.CreateFlowInput,
// field for field. State absent and state null stay distinct.
type createFlowRequest struct {
	SyncMode     sdk.SyncMode    `json:"sync_mode,omitempty"`
	OwnerKey     string          `json:"owner_key,omitempty"`
	ControllerID string          `json:"controller_id,omitempty"`
	Goal         string          `json:"goal,omitempty"`
	CurrentStep  string          `json:"current_step,omitempty"`
	State        json.RawMessage `json:"state,omitempty"`
	NotifyPolicy string          `json:"notify_policy,omitempty"`
	// NotifyTo and NotifyTemplate are where the flow's notices go and
	// how they read; destinations are specs as written, never secrets.
	NotifyTo       []string    `json:"notify_to,omitempty"`
	NotifyTemplate string      `json:"notify_template,omitempty"`
	Origin         string      `json:"origin,omitempty"`
	Budget         *sdk.Budget `json:"budget,omitempty"`
	// OnFinish is where the flow's finish notification goes.
	OnFinish *sdk.FinishNotify `json:"on_finish,omitempty"`
	// AllowUnknownController creates the flow even when the gateway runs
	// no plugin of that controller.
	AllowUnknownController bool `json:"allow_unknown_controller,omitempty"`
}

// updateFlowRequest is the body of POST /v1/flows/{id}/update.
// ExpectedRevision is required: a guarded write never defaults the
// revision it was read at.
type updateFlowRequest struct {
	ExpectedRevision *int64        `json:"expected_revision"`
	Patch            flowPatchJSON `json:"patch"`
}

// flowPatchJSON is apitype.FlowPatch on the wire, field for field. An
// absent field leaves the flow's value alone; state or wait null stores
// null.
type flowPatchJSON struct {
	Status         sdk.FlowStatus  `json:"status,omitempty"`
	State          json.RawMessage `json:"state,omitempty"`
	Wait           json.RawMessage `json:"wait,omitempty"`
	CurrentStep    *string         `json:"current_step,omitempty"`
	BlockedTaskID  *string         `json:"blocked_task_id,omitempty"`
	BlockedSummary *string         `json:"blocked_summary,omitempty"`
}
