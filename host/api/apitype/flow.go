package apitype

import (
	"encoding/json"
	"time"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// FlowFilter selects flows for ViewFlows. The zero value selects all.
type FlowFilter struct {
	Status       sdk.FlowStatus
	OwnerKey     string
	ControllerID string
	SyncMode     sdk.SyncMode
	// ChainID selects the runs of one chain (see sdk.Flow.Chain).
	ChainID string
	// Search, when set, selects flows whose goal, owner key or a label
	// key or value holds it, ignoring case.
	Search string
	// Since and Until, when set, bound the flows' creation time, both
	// included.
	Since, Until time.Time
	// Scan bounds how many flows one page examines; zero is no bound. A
	// page that reaches it before it is full ends early with a Next
	// cursor.
	Scan int
	// After is the cursor: list flows older than this flow id.
	After string
	// Limit caps the page; zero means no limit.
	Limit int
}

// FlowView is a flow with its linked tasks and their summary: what `tasks
// flow show` and `tasks flow list --json` print. The flow's fields are
// inlined in JSON.
type FlowView struct {
	*sdk.Flow
	Tasks       []*stored.Task  `json:"tasks"`
	TaskSummary sdk.TaskSummary `json:"task_summary"`
	// ControllerError is the error the flow's controller last gave for
	// the event at the head of the flow's outbox; empty when none failed.
	ControllerError string `json:"controller_error,omitempty"`
	// ContinuedBy is, for a chain's first run, its continuation's id.
	ContinuedBy string `json:"continued_by,omitempty"`
	// FirstFailure is, for a continuation, why the chain's first run
	// failed.
	FirstFailure string `json:"first_failure,omitempty"`
	// RunUsage sums the usage this run's tasks reported; nil when none
	// did. ChainState is the record of the flow's whole chain.
	RunUsage   *sdk.Usage `json:"run_usage,omitempty"`
	ChainState *Chain     `json:"chain,omitempty"`
}

// FlowViewPage is one page of flow views, newest first. Damaged lists the
// records the listing skipped because they cannot be read.
type FlowViewPage struct {
	Flows   []FlowView
	Next    string
	Damaged []DamagedRecord
}

// Chain is what the gateway knows about an execution chain as a whole:
// its runs and continuation, the usage its tasks reported, its soft
// budget, and the marks that stop it (api.ChainHalted says why).
type Chain struct {
	ID string `json:"id"`
	// Runs are the chain's flows, first run first: at most two.
	Runs []string `json:"runs,omitempty"`
	// Continuation is the successor's id once one was accepted.
	Continuation string `json:"continuation,omitempty"`
	// Usage sums every usage report of the chain's tasks; nil when none
	// was reported.
	Usage *sdk.Usage `json:"usage,omitempty"`
	// Budget is the chain's soft budget; nil means none.
	Budget *sdk.Budget `json:"budget,omitempty"`
	// BillingExhaustedAt is when a task of the chain failed on an explicit
	// billing code, and BillingEvidence which code.
	BillingExhaustedAt time.Time `json:"billing_exhausted_at,omitzero"`
	BillingEvidence    string    `json:"billing_evidence,omitempty"`
	// BudgetExhaustedAt is when the reported usage reached the budget.
	BudgetExhaustedAt time.Time `json:"budget_exhausted_at,omitzero"`
}

// FlowCounts counts flows by status and how many non-terminal flows carry a
// cancel request.
type FlowCounts struct {
	Total           int                    `json:"total"`
	ByStatus        map[sdk.FlowStatus]int `json:"by_status"`
	CancelRequested int                    `json:"cancel_requested"`
}

// CreateFlowInput describes a new flow. OwnerKey and Goal are required;
// ControllerID is required for a managed flow.
type CreateFlowInput struct {
	// SyncMode defaults to managed. Mirrored flows are made by RunTask,
	// never directly.
	SyncMode     sdk.SyncMode
	OwnerKey     string
	ControllerID string
	Goal         string
	CurrentStep  string
	// State is the initial JSON state; nil leaves it absent.
	State json.RawMessage
	// NotifyPolicy defaults to done_only. NotifyTo and NotifyTemplate
	// are where its notices go and how they read (see sdk.Flow).
	NotifyPolicy   string
	NotifyTo       []string
	NotifyTemplate string
	Origin         string
	// Budget is the soft usage budget of the flow's chain; nil means none.
	Budget *sdk.Budget
	// OnFinish is where the flow's finish notification goes; nil is
	// nowhere (see sdk.Flow.OnFinish).
	OnFinish *sdk.FinishNotify
	// AllowUnknownController lets a running gateway create the flow even
	// though it runs no plugin named ControllerID; without it the gateway
	// refuses.
	AllowUnknownController bool
}

// FlowPatch is a generic guarded change to a managed flow (UpdateFlow).
// Nil fields are left as they are.
type FlowPatch struct {
	// Status, if set, moves the flow under the state machine. cancelled
	// and lost are refused here: use CancelFlow.
	Status sdk.FlowStatus
	// State replaces the JSON state; JSON null stores null.
	State json.RawMessage
	// Wait replaces the JSON wait; JSON null stores null.
	Wait           json.RawMessage
	CurrentStep    *string
	BlockedTaskID  *string
	BlockedSummary *string
}

// CancelResult says what a cancel did. Flow is the flow after the cancel;
// Active counts child tasks still running, which the runner stops.
type CancelResult struct {
	Flow   *sdk.Flow      `json:"flow"`
	Tasks  []*stored.Task `json:"tasks"`
	Active int            `json:"active"`
}

// RetryResult is what a retry did: the flow, queued again under its id,
// its new task, and which run of the flow that task is.
type RetryResult struct {
	Flow *sdk.Flow    `json:"flow"`
	Task *stored.Task `json:"task"`
	// Attempt numbers the flow's runs: its first task is attempt 1.
	Attempt int `json:"attempt"`
}

// ContinueResult is the answer to ContinueFlow: the successor flow, and
// Created false when an identical request had made it before.
type ContinueResult struct {
	Flow    *sdk.Flow `json:"flow"`
	Created bool      `json:"created"`
}
