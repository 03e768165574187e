package sdk

import (
	"context"
	"encoding/json"
	"time"

	"github.com/flowgate/flowgate/sdk/errcode"
)

// APIVersion is the version of the controller API this SDK speaks. A
// gateway refuses a controller whose major API version it does not know.
const APIVersion = 1

// Controller is what a controller plugin implements: it drives managed
// flows by reacting to their events. Serve runs it as a go-plugin process.
//
// Events arrive at least once and in order per flow: a controller must be
// idempotent. Create tasks with idempotency keys (see TaskRequest), and
// write flows with the revision you read.
type Controller interface {
	// Info describes the controller. It is called once per plugin start.
	Info(ctx context.Context) (Info, error)
	// HandleEvent reacts to one event of a flow this controller drives.
	// Returning nil acknowledges the event and removes it from the
	// outbox; an error (or a timeout) makes the gateway deliver it again
	// later, with backoff. host calls back into the gateway.
	HandleEvent(ctx context.Context, host Host, ev Event) error
	// Shutdown is called before the gateway stops the plugin. It has a
	// short deadline; after it the process is killed.
	Shutdown(ctx context.Context) error
}

// Info describes a controller.
type Info struct {
	// Name is the controller id flows name in controller_id.
	Name    string `json:"name"`
	Version string `json:"version"`
	// APIVersion is the SDK's APIVersion the controller was built with.
	APIVersion int `json:"api_version"`
	// Capabilities are what the controller asks of the gateway beyond
	// the plain event model: CapabilityFoldTaskFinished. None if empty.
	Capabilities []string `json:"capabilities,omitempty"`
	// Stages are the typed pipeline stages the controller provides; it
	// runs them by implementing StageProvider. None if empty.
	Stages []Stage `json:"stages,omitempty"`
	// Watch asks the gateway to run the controller's Watcher once per
	// plugin instance; the controller must implement Watcher.
	Watch bool `json:"watch,omitempty"`
}

// CapabilityFoldTaskFinished, in Info.Capabilities, says the controller
// reads what it needs from the flow and its tasks at every event, never
// from the event's TaskID alone: the gateway may then hand it one
// task.finished event, the last, for several queued back to back (a
// fan-out's tasks ending together) and acknowledge all of them once it is
// handled, so a fan-out of N tasks costs fewer than N deliveries. The
// events are still delivered in order and at least once.
const CapabilityFoldTaskFinished = "fold_task_finished"

// Host is the gateway as a controller sees it. Every method is a call over
// one long-lived connection to the gateway. Errors are the sdk sentinels:
// a stale revision is a *RevisionConflictError (errors.Is
// ErrRevisionConflict) carrying the current flow; a call made after the
// plugin instance was replaced or the gateway went away fails with
// ErrPluginShutdown.
type Host interface {
	// CreateFlow creates a managed flow that this controller drives, or
	// returns the flow req.IdempotencyKey already names (created false):
	// the key is stored with the flow in the transaction that creates it,
	// so a call repeated after a crash of the plugin or the gateway finds
	// the flow the first one made. The flow's flow.started event comes to
	// HandleEvent as for a flow made any other way, once the flow is
	// durable. An empty key, goal or owner is refused with ErrInvalid; a
	// parent the controller does not drive with ErrNotManaged. Past the
	// gateway's cap on the active flows the controller created, the call
	// is refused with ErrResourceExhausted, naming the cap, and creates
	// nothing.
	CreateFlow(ctx context.Context, req FlowRequest) (flow *Flow, created bool, err error)
	// GetFlow returns a flow.
	GetFlow(ctx context.Context, flowID string) (*Flow, error)
	// ListTasks returns the tasks of a flow, oldest first.
	ListTasks(ctx context.Context, flowID string) ([]*Task, error)
	// CreateTask creates a task in a flow, or returns the task that
	// already has req.IdempotencyKey (created false).
	CreateTask(ctx context.Context, req TaskRequest) (task *Task, created bool, err error)
	// UpdateFlow changes a flow's state, wait, step or blocked fields if
	// its revision is still expected.
	UpdateFlow(ctx context.Context, flowID string, expected int64, u FlowUpdate) (*Flow, error)
	// Advance updates a flow and creates the tasks that carry it to its
	// next step in one transaction, so a step costs one commit and no
	// crash can leave the one without the other (see AdvanceRequest). It
	// refuses what UpdateFlow and CreateTask refuse, changing nothing: a
	// stale revision is a *RevisionConflictError.
	Advance(ctx context.Context, flowID string, expected int64, a AdvanceRequest) (AdvanceResult, error)
	// SetWaiting parks a flow: waiting, or blocked when a blocking task or
	// summary is given.
	SetWaiting(ctx context.Context, flowID string, expected int64, w WaitRequest) (*Flow, error)
	// Resume moves a waiting or blocked flow back to queued or running.
	Resume(ctx context.Context, flowID string, expected int64, r ResumeRequest) (*Flow, error)
	// Finish ends a flow succeeded.
	Finish(ctx context.Context, flowID string, expected int64, e EndRequest) (*Flow, error)
	// Fail ends a flow failed.
	Fail(ctx context.Context, flowID string, expected int64, e EndRequest) (*Flow, error)
	// RequestCancel records a sticky cancel request on a flow.
	RequestCancel(ctx context.Context, flowID string, expected int64) (*Flow, error)
	// CancelTask stops one task of a flow this controller drives: a
	// queued task is cancelled at once, a running one is stopped by its
	// runner (its task.finished follows). A task already ended is
	// refused with ErrTerminal.
	CancelTask(ctx context.Context, taskID string) (*Task, error)
	// Continue asks for the one continuation of failed or partial flow
	// flowID, which this controller drives: a successor flow in the same
	// chain that reuses what succeeded and reruns the rest (see
	// ContinueRequest and docs/recovery.md). An identical request returns
	// the same successor with created false; a refused one names its rule
	// (ErrInvalid), and a stale revision is a *RevisionConflictError.
	Continue(ctx context.Context, flowID string, req ContinueRequest) (successor *Flow, created bool, err error)
	// WakeAt asks for a flow.woken event (data Woken) on flow flowID at
	// or after at, once for key: the gateway keeps the wake in its store,
	// so it fires across restarts, and a key already set (pending or
	// fired) keeps its first time, so asking again on a redelivered event
	// changes nothing. A wake that comes due after the flow ended fires
	// no event. It refuses an empty key (ErrInvalid) and a flow that has
	// ended (ErrTerminal).
	WakeAt(ctx context.Context, flowID string, at time.Time, key string) error
	// Log writes a line to the gateway's log, attributed to the plugin.
	Log(ctx context.Context, level, msg string, fields map[string]string) error
	// ListStages lists the pipeline stages the gateway's controller
	// plugins provide (their Info.Stages), each with its Plugin, sorted by
	// name. A plugin that is not running is listed with the stages it
	// declared when it last ran.
	ListStages(ctx context.Context) ([]Stage, error)
	// RunStage runs a stage another controller provides, for a pipeline
	// of flow call.FlowID, which this controller drives: the gateway hands
	// it to the provider's StageProvider and returns its output (see
	// StageProvider.RunStage). No provider is ErrNotFound; a provider that
	// is starting or restarting is ErrUnavailable (try again later); a
	// failure of the stage is an error whose message names the plugin.
	RunStage(ctx context.Context, call StageCall) (json.RawMessage, error)
	// KeepValue keeps value for flow flowID, which this controller
	// drives, in the gateway's store, and returns its name: the SHA-256
	// of its bytes in lowercase hex. It is how a controller keeps what is
	// too large for the flow's state where every gateway of a shared
	// store reads it (the state names the digest); keeping the same bytes
	// again writes nothing, and the values go when the flow is pruned.
	// A value over MaxKeptValue is refused with ErrInvalid, and nothing
	// is written.
	KeepValue(ctx context.Context, flowID string, value []byte) (sum string, err error)
	// KeptValue returns the value flow flowID keeps under digest sum
	// (KeepValue). A value the flow does not keep is ErrNotFound; a sum
	// that is not a SHA-256 in lowercase hex is ErrInvalid.
	KeptValue(ctx context.Context, flowID, sum string) ([]byte, error)
	// StoreValue stores value as this controller's under (scope, key),
	// replacing what was there, outside any flow: one value per
	// controller, scope and key, which every gateway of a shared store
	// reads and writes, kept until it is replaced (no flow's prune
	// deletes it). The pipeline controller keeps state.set and diff.last
	// values so. A value over MaxKeptValue, and a scope or key that is
	// empty or over MaxStoredName bytes, is refused with ErrInvalid, and
	// nothing is written.
	StoreValue(ctx context.Context, scope, key string, value []byte) error
	// StoredValue returns this controller's value under (scope, key)
	// (StoreValue); none is ErrNotFound.
	StoredValue(ctx context.Context, scope, key string) ([]byte, error)
}

// MaxStoredName bounds the scope and the key of a stored value
// (Host.StoreValue), in bytes.
const MaxStoredName = 256

// MaxKeptValue bounds one value a flow keeps (Host.KeepValue): one store
// record, which an etcd transaction carries whole.
const MaxKeptValue = 1 << 20

// FlowRequest asks for a managed flow driven by the calling controller
// (Host.CreateFlow).
type FlowRequest struct {
	// IdempotencyKey is required: derive it from what the flow is for
	// (a file's name and digest, a message id), so that asking again for
	// the same thing returns the same flow. Keys are the controller's own:
	// another controller's key never names this controller's flow.
	IdempotencyKey string `json:"idempotency_key"`
	Goal           string `json:"goal"`
	OwnerKey       string `json:"owner_key"`
	// State is the flow's initial JSON state; nil leaves it absent.
	State json.RawMessage `json:"state,omitempty"`
	// Labels are recorded on the flow as they are.
	Labels map[string]string `json:"labels,omitempty"`
	// ParentFlowID, if set, names a flow this controller drives that the
	// new flow is made for (Flow.ParentFlowID).
	ParentFlowID string `json:"parent_flow_id,omitempty"`
}

// TaskRequest asks for a task in a managed flow.
type TaskRequest struct {
	FlowID string `json:"flow_id"`
	// IdempotencyKey should be set on every task a controller creates:
	// events are delivered at least once, and the key makes a repeated
	// create return the first task. Derive it from the flow id and the
	// step, e.g. flowID + ":fetch".
	IdempotencyKey string   `json:"idempotency_key"`
	Runtime        string   `json:"runtime,omitempty"`
	Label          string   `json:"label,omitempty"`
	Spec           TaskSpec `json:"spec"`
}

// FlowUpdate is a guarded change of a flow's fields; nil fields are kept.
type FlowUpdate struct {
	State          json.RawMessage `json:"state,omitempty"`
	Wait           json.RawMessage `json:"wait,omitempty"`
	CurrentStep    *string         `json:"current_step,omitempty"`
	BlockedTaskID  *string         `json:"blocked_task_id,omitempty"`
	BlockedSummary *string         `json:"blocked_summary,omitempty"`
}

// WaitRequest is what SetWaiting records.
type WaitRequest struct {
	CurrentStep    string          `json:"current_step,omitempty"`
	State          json.RawMessage `json:"state,omitempty"`
	Wait           json.RawMessage `json:"wait,omitempty"`
	BlockedTaskID  string          `json:"blocked_task_id,omitempty"`
	BlockedSummary string          `json:"blocked_summary,omitempty"`
}

// ResumeRequest is what Resume records. Status is queued (default) or
// running.
type ResumeRequest struct {
	Status      FlowStatus      `json:"status,omitempty"`
	CurrentStep string          `json:"current_step,omitempty"`
	State       json.RawMessage `json:"state,omitempty"`
}

// EndRequest is what Finish and Fail record. The blocked fields say, for
// Fail, what the flow failed on.
type EndRequest struct {
	// Partial, on Fail, ends the flow partial instead of failed: some but
	// not all of its work finished. Finish ignores it.
	Partial        bool            `json:"partial,omitempty"`
	CurrentStep    string          `json:"current_step,omitempty"`
	State          json.RawMessage `json:"state,omitempty"`
	BlockedTaskID  string          `json:"blocked_task_id,omitempty"`
	BlockedSummary string          `json:"blocked_summary,omitempty"`
	// Output, on Finish, is what the flow produced: it becomes
	// Flow.Output, where readers find it. Nil records none; Fail
	// ignores it. Its Value, when set, must be valid JSON.
	Output *Output `json:"output,omitempty"`
}

// ErrPluginShutdown means the plugin instance is gone or was replaced: the
// call did not reach a live gateway connection. The event will be
// delivered again to the next instance.
var ErrPluginShutdown = errcode.ErrPluginShutdown

// DefaultEventTimeout is how long the gateway waits for HandleEvent before
// it counts the delivery as failed.
const DefaultEventTimeout = 30 * time.Second
