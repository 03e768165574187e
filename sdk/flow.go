package sdk

import (
	"encoding/json"
	"time"
)

// Flow is the durable record of one multi-step piece of work. Revision is 1
// for a new flow and every write to the flow bumps it by one; it is the
// gateway store's revision of the flow's record.
type Flow struct {
	ID       string   `json:"id"`
	SyncMode SyncMode `json:"sync_mode"`
	OwnerKey string   `json:"owner_key"`
	// ControllerID names the controller plugin driving a managed flow.
	ControllerID string     `json:"controller_id,omitempty"`
	Revision     int64      `json:"revision"`
	Status       FlowStatus `json:"status"`
	Goal         string     `json:"goal"`
	CurrentStep  string     `json:"current_step,omitempty"`
	// State is the controller's JSON state. Absent (nil) and JSON null are
	// kept distinct.
	State json.RawMessage `json:"state,omitempty"`
	// Wait describes what a waiting flow waits for, as JSON. Absent and
	// JSON null are kept distinct.
	Wait              json.RawMessage `json:"wait,omitempty"`
	BlockedTaskID     string          `json:"blocked_task_id,omitempty"`
	BlockedSummary    string          `json:"blocked_summary,omitempty"`
	CancelRequestedAt time.Time       `json:"cancel_requested_at,omitzero"`
	NotifyPolicy      string          `json:"notify_policy"`
	Origin            string          `json:"origin,omitempty"`
	CreatedAt         time.Time       `json:"created_at"`
	UpdatedAt         time.Time       `json:"updated_at"`
	EndedAt           time.Time       `json:"ended_at,omitzero"`
	// ChainID is the chain the flow belongs to: its own id for a first
	// run, the source's chain for a continuation. Empty on flows stored
	// before chains existed, which count as their own chain.
	ChainID string `json:"chain_id,omitempty"`
	// SourceFlowID and SourceRevision name the flow and revision a
	// continuation was based on; empty on a first run.
	SourceFlowID   string `json:"source_flow_id,omitempty"`
	SourceRevision int64  `json:"source_revision,omitempty"`
	// Continuation is the receipt of the continuation this flow runs,
	// nil on a first run.
	Continuation *Continuation `json:"continuation,omitempty"`
	// UsageBeforeRun is, for a continuation, the usage its chain had
	// reported when the continuation was accepted: the earlier run's. Each
	// run keeps only the usage it incurs itself; the chain's budget counts
	// both. Nil on a first run, or when nothing was reported.
	UsageBeforeRun *Usage `json:"usage_before_run,omitempty"`
	// OnFinish, when set, is where the flow's finish notification goes:
	// one when it ends (its terminal status, or NoticeAborted for a
	// cancel), delivered at least once and carrying the final record.
	OnFinish *FinishNotify `json:"on_finish,omitempty"`
	// IdempotencyKey is the key of the Host.CreateFlow call that made
	// the flow; empty for a flow made another way.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Labels are what the flow's creator recorded on it.
	Labels map[string]string `json:"labels,omitempty"`
	// ParentFlowID names the flow this one was made for by its
	// controller (FlowRequest.ParentFlowID); empty when none.
	ParentFlowID string `json:"parent_flow_id,omitempty"`
	// NotifyTo lists where the flow's notices go under its NotifyPolicy
	// (NotifyDoneOnly, NotifyStateChanges or NotifySilent), as written: a
	// name from the gateway's notify config, a URL, or "cmd:COMMAND".
	// Secret parts are ${VAR} refs the gateway fills from its environment
	// when it sends, so the record never holds them. Empty means the
	// policy sends nothing.
	NotifyTo []string `json:"notify_to,omitempty"`
	// NotifyTemplate is the Go text/template the flow's chat and mail
	// messages are written from, over the notice JSON; empty means the
	// default one.
	NotifyTemplate string `json:"notify_template,omitempty"`
	// Output is what the flow produced, as its controller gave it to
	// Finish (EndRequest.Output). Nil until then, and for a flow whose
	// controller gives none. Readers (the scheduler's deliveries, the
	// CLI, the run center) read it here, never from State.
	Output *Output `json:"output,omitempty"`
	// Decisions are the answers given at the flow's gates, by the gate's
	// step (Wait.Step): the gateway records each one when someone
	// answers, or when the gate expires, in the same write that resumes
	// the flow. Nil until a gate is answered. A controller reads the
	// answer here when the flow resumes.
	Decisions map[string]Decision `json:"decisions,omitempty"`
}

// The notify policies (Flow.NotifyPolicy): which of a flow's notices go
// to its NotifyTo. Each goes to each destination at least once, under a
// key the message carries so a receiver can drop a repeat.
const (
	// NotifyDoneOnly sends one message when the flow ends. It is the
	// default.
	NotifyDoneOnly = "done_only"
	// NotifyStateChanges sends one message for each change of the
	// flow's status, its end included.
	NotifyStateChanges = "state_changes"
	// NotifySilent sends nothing, and also holds back the finish notice
	// the flow's controller is configured to send; a notice the flow or
	// its task asked for separately (OnFinish, NotifyOnMilestone) still
	// goes.
	NotifySilent = "silent"
)

// NotifyPolicies are the notify policies a flow may have, the default
// first.
func NotifyPolicies() []string { return []string{NotifyDoneOnly, NotifyStateChanges, NotifySilent} }

// Chain returns the flow's chain id, its own id when none is recorded.
func (f *Flow) Chain() string {
	if f.ChainID == "" {
		return f.ID
	}
	return f.ChainID
}

// CancelRequested reports whether a cancel request has been recorded.
func (f *Flow) CancelRequested() bool { return !f.CancelRequestedAt.IsZero() }

// Wait is the conventional shape of a flow's wait field: what a paused flow
// waits for and how to resume it. Controllers may store any JSON; this is
// what flowgate's own controllers write, and what the gateway reads to
// list and answer gates (see IsGate). A controller may add fields of its
// own next to these.
type Wait struct {
	// Kind is what the flow waits for: "approval" or "input" (a gate,
	// GateApproval and GateInput), "signal", "timer" or a controller's
	// own word.
	Kind        string          `json:"kind"`
	Prompt      string          `json:"prompt,omitempty"`
	Preview     string          `json:"preview,omitempty"`
	Items       json.RawMessage `json:"items,omitempty"`
	ResumeToken string          `json:"resume_token,omitempty"`
	Until       time.Time       `json:"until,omitzero"`
	// Step names the step a gate stands at; decisions are recorded under
	// it, so a gate without one cannot be answered.
	Step string `json:"step,omitempty"`
	// ApprovalID is a gate's short id, which people type to answer it.
	ApprovalID string `json:"approval_id,omitempty"`
	// Error says why the controller did not accept the last decision at
	// this gate; a gate with an error may be answered anew.
	Error string `json:"error,omitempty"`
	// Schema is an input gate's response schema (a JSON object in the
	// JSON Schema subset of package flows). The gateway refuses a
	// response that fails it before recording anything but a
	// gate.refused history entry, so the gate stays open; absent, any
	// JSON is taken.
	Schema json.RawMessage `json:"schema,omitempty"`
	// The approver rules of an approval gate (see CheckApproval): the
	// gateway refuses an approval these rules do not accept at once,
	// as it refuses a response that fails Schema, and the gate stays
	// open. InitiatedBy names who asked for the approval;
	// RequiredApprover, if set, is the only one who may approve;
	// RequireDifferentApprover forbids InitiatedBy to approve. Empty,
	// anyone may approve. A denial is never checked.
	InitiatedBy              string `json:"initiated_by,omitempty"`
	RequiredApprover         string `json:"required_approver,omitempty"`
	RequireDifferentApprover bool   `json:"require_different_approver,omitempty"`
}
