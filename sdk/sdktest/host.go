package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// ownerKey is the owner of every flow a Host makes.
const ownerKey = "sdktest"

// jsonNull is what wait becomes when a flow stops waiting.
var jsonNull = json.RawMessage("null")

// Host is an in-memory sdk.Host that keeps flows, tasks and per-flow event
// outboxes by the gateway engine's rules: every flow write bumps the
// revision and a stale expected revision fails with a
// *sdk.RevisionConflictError carrying the current flow; nothing leaves a
// terminal status (sdk.ErrTerminal); a flow with a cancel request takes no
// new tasks and moves only toward cancelled or failed
// (sdk.ErrCancelRequested); a repeated idempotency key returns the first
// task. Its flows are all managed.
//
// Besides the sdk.Host methods a controller calls, it has the gateway's
// side: CreateFlow, StartTask, FinishTask, Events and Ack. Records are
// stored as JSON, as the gateway stores them, so every read returns a copy.
// Use NewHost; a Host is safe for concurrent use.
type Host struct {
	mu        sync.Mutex
	flows     map[string][]byte   // flow id → sdk.Flow JSON
	tasks     map[string][]byte   // task id → sdk.Task JSON
	flowTasks map[string][]string // flow id → task ids, oldest first
	keys      map[string]string   // idempotency key → task id
	outbox    map[string][]sdk.Event
	seq       map[string]int64
	logs      []LogEntry
	lastID    int
}

var _ sdk.Host = (*Host)(nil)

// LogEntry is one Log call a controller made.
type LogEntry struct {
	Level   string
	Message string
	Fields  map[string]string
}

// NewHost returns an empty Host.
func NewHost() *Host {
	return &Host{
		flows:     map[string][]byte{},
		tasks:     map[string][]byte{},
		flowTasks: map[string][]string{},
		keys:      map[string]string{},
		outbox:    map[string][]sdk.Event{},
		seq:       map[string]int64{},
	}
}

// now is the engine's clock: UTC, to the microsecond, which JSON keeps.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func (h *Host) nextID(prefix string) string {
	h.lastID++
	return fmt.Sprintf("%s-%d", prefix, h.lastID)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", sdk.ErrInvalid, fmt.Sprintf(format, args...))
}

func checkJSON(field string, b json.RawMessage) error {
	if b != nil && !json.Valid(b) {
		return invalid("%s is not valid JSON", field)
	}
	return nil
}

// CreateFlow makes a managed flow of controller controllerID, queued at
// revision 0, and queues flow.started for it. state, if not nil, must be
// JSON; nil leaves it absent.
func (h *Host) CreateFlow(controllerID, goal string, state json.RawMessage) (*sdk.Flow, error) {
	if strings.TrimSpace(controllerID) == "" || strings.TrimSpace(goal) == "" {
		return nil, invalid("a managed flow needs a controller id and a goal")
	}
	if err := checkJSON("state", state); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t := now()
	f := &sdk.Flow{
		ID: h.nextID("flow"), SyncMode: sdk.SyncManaged, OwnerKey: ownerKey,
		ControllerID: strings.TrimSpace(controllerID), Status: sdk.FlowQueued,
		Goal: strings.TrimSpace(goal), State: state, NotifyPolicy: "done_only",
		CreatedAt: t, UpdatedAt: t,
	}
	h.putFlow(f)
	h.appendEvent(f.ID, sdk.EventFlowStarted, "", nil)
	return f, nil
}

// putFlow stores f as it is.
func (h *Host) putFlow(f *sdk.Flow) {
	b, err := json.Marshal(f)
	if err != nil {
		panic(fmt.Sprintf("sdktest: encode flow %s: %v", f.ID, err))
	}
	h.flows[f.ID] = b
}

// saveFlow stores a change to f: the next revision, stamped now.
func (h *Host) saveFlow(f *sdk.Flow) {
	f.Revision++
	f.UpdatedAt = now()
	h.putFlow(f)
}

func (h *Host) loadFlow(id string) (*sdk.Flow, error) {
	b, ok := h.flows[id]
	if !ok {
		return nil, fmt.Errorf("%w: flow %q does not exist", sdk.ErrNotFound, id)
	}
	f := new(sdk.Flow)
	if err := json.Unmarshal(b, f); err != nil {
		return nil, err
	}
	return f, nil
}

func (h *Host) putTask(t *sdk.Task) {
	b, err := json.Marshal(t)
	if err != nil {
		panic(fmt.Sprintf("sdktest: encode task %s: %v", t.ID, err))
	}
	h.tasks[t.ID] = b
}

func (h *Host) loadTask(id string) (*sdk.Task, error) {
	b, ok := h.tasks[id]
	if !ok {
		return nil, fmt.Errorf("%w: task %q does not exist", sdk.ErrNotFound, id)
	}
	t := new(sdk.Task)
	if err := json.Unmarshal(b, t); err != nil {
		return nil, err
	}
	return t, nil
}

func (h *Host) appendEvent(flowID string, typ sdk.EventType, taskID string, data json.RawMessage) {
	h.seq[flowID]++
	h.outbox[flowID] = append(h.outbox[flowID], sdk.Event{
		FlowID: flowID, Seq: h.seq[flowID], Type: typ, TaskID: taskID, Data: data, CreatedAt: now(),
	})
}

// Events returns the events of flow flowID not yet acknowledged, oldest
// first.
func (h *Host) Events(flowID string) []sdk.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]sdk.Event(nil), h.outbox[flowID]...)
}

// Ack removes event seq of flow flowID from its outbox, as the gateway
// does once the controller handled it. Acknowledging an event that is gone
// does nothing.
func (h *Host) Ack(flowID string, seq int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	evs := h.outbox[flowID]
	for i, ev := range evs {
		if ev.Seq == seq {
			h.outbox[flowID] = append(evs[:i:i], evs[i+1:]...)
			return
		}
	}
}

// Logs returns what controllers logged through Log, in order.
func (h *Host) Logs() []LogEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]LogEntry(nil), h.logs...)
}

// move changes f's status as the engine does: never out of a terminal
// status, and under a cancel request only toward cancelled, failed or
// lost. A terminal status stamps ended_at and clears wait; blocked fields
// are kept only by blocked and failed.
func move(f *sdk.Flow, to sdk.FlowStatus) error {
	if f.Status.Terminal() {
		return fmt.Errorf("%w: flow %s is already %s and cannot become %s; a finished flow is never reopened: start a new flow to carry the work on",
			sdk.ErrTerminal, f.ID, f.Status, to)
	}
	if f.CancelRequested() && to != f.Status && to != sdk.FlowCancelled && to != sdk.FlowFailed && to != sdk.FlowLost {
		return fmt.Errorf("%w: flow %s has a cancel request and cannot become %s; it becomes cancelled when its active tasks settle",
			sdk.ErrCancelRequested, f.ID, to)
	}
	f.Status = to
	if to.Terminal() {
		f.EndedAt = now()
		f.Wait = jsonNull
	} else {
		f.EndedAt = time.Time{}
	}
	if to != sdk.FlowBlocked && to != sdk.FlowFailed {
		f.BlockedTaskID, f.BlockedSummary = "", ""
	}
	return nil
}

// expect loads flow id and checks that its revision is expected. The
// caller holds h.mu.
func (h *Host) expect(id string, expected int64) (*sdk.Flow, error) {
	f, err := h.loadFlow(id)
	if err != nil {
		return nil, err
	}
	if f.Revision != expected {
		return nil, &sdk.RevisionConflictError{Expected: expected, Current: f}
	}
	return f, nil
}

// guarded loads flow id at the expected revision, lets fn change it and
// saves it. fn must fail before it queues events.
func (h *Host) guarded(ctx context.Context, id string, expected int64, fn func(f *sdk.Flow) error) (*sdk.Flow, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := h.expect(id, expected)
	if err != nil {
		return nil, err
	}
	if err := fn(f); err != nil {
		return nil, err
	}
	h.saveFlow(f)
	return f, nil
}

// GetFlow implements sdk.Host.
func (h *Host) GetFlow(ctx context.Context, flowID string) (*sdk.Flow, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.loadFlow(flowID)
}

// ListTasks implements sdk.Host.
func (h *Host) ListTasks(ctx context.Context, flowID string) ([]*sdk.Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err := h.loadFlow(flowID); err != nil {
		return nil, err
	}
	out := []*sdk.Task{}
	for _, id := range h.flowTasks[flowID] {
		t, err := h.loadTask(id)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// CreateTask implements sdk.Host. The task is queued; StartTask and
// FinishTask move it on.
func (h *Host) CreateTask(ctx context.Context, req sdk.TaskRequest) (*sdk.Task, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	flowID, key := strings.TrimSpace(req.FlowID), strings.TrimSpace(req.IdempotencyKey)
	runtime := strings.TrimSpace(req.Runtime)
	if runtime == "" {
		runtime = "cli"
	}
	switch {
	case flowID == "":
		return nil, false, invalid("a controller's task needs a flow id")
	case strings.ContainsAny(runtime, " /\t\n"):
		return nil, false, invalid("runtime %q must be one word", runtime)
	case len(req.Spec.Argv) > 0 && req.Spec.Shell != "":
		return nil, false, invalid("a task runs either argv or a shell command line, not both")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if id, ok := h.keys[key]; ok && key != "" {
		t, err := h.loadTask(id)
		if err != nil {
			return nil, false, err
		}
		if t.FlowID != flowID {
			return nil, false, invalid("idempotency key %q already belongs to task %s in flow %s; use another key", key, t.ID, t.FlowID)
		}
		return t, false, nil
	}
	f, err := h.loadFlow(flowID)
	if err != nil {
		return nil, false, err
	}
	switch {
	case f.CancelRequested():
		return nil, false, fmt.Errorf("%w: flow %s is being cancelled and accepts no new tasks", sdk.ErrCancelRequested, f.ID)
	case f.Status.Terminal():
		return nil, false, fmt.Errorf("%w: flow %s is already %s and accepts no new tasks", sdk.ErrTerminal, f.ID, f.Status)
	}
	t := &sdk.Task{
		ID: h.nextID("task"), FlowID: flowID, OwnerKey: f.OwnerKey, Runtime: runtime,
		Label: strings.TrimSpace(req.Label), Spec: req.Spec, IdempotencyKey: key,
		Status: sdk.TaskQueued, CreatedAt: now(),
	}
	t.UpdatedAt = t.CreatedAt
	h.putTask(t)
	h.flowTasks[flowID] = append(h.flowTasks[flowID], t.ID)
	if key != "" {
		h.keys[key] = t.ID
	}
	return t, true, nil
}

// UpdateFlow implements sdk.Host.
func (h *Host) UpdateFlow(ctx context.Context, flowID string, expected int64, u sdk.FlowUpdate) (*sdk.Flow, error) {
	if err := checkJSON("state", u.State); err != nil {
		return nil, err
	}
	if err := checkJSON("wait", u.Wait); err != nil {
		return nil, err
	}
	return h.guarded(ctx, flowID, expected, func(f *sdk.Flow) error {
		if u.State != nil {
			f.State = u.State
		}
		if u.Wait != nil {
			f.Wait = u.Wait
		}
		setString(&f.CurrentStep, u.CurrentStep)
		setString(&f.BlockedTaskID, u.BlockedTaskID)
		setString(&f.BlockedSummary, u.BlockedSummary)
		return nil
	})
}

func setString(dst, v *string) {
	if v != nil {
		*dst = strings.TrimSpace(*v)
	}
}

// SetWaiting implements sdk.Host: blocked when a blocking task or summary
// is given, else waiting.
func (h *Host) SetWaiting(ctx context.Context, flowID string, expected int64, w sdk.WaitRequest) (*sdk.Flow, error) {
	if err := checkJSON("state", w.State); err != nil {
		return nil, err
	}
	if err := checkJSON("wait", w.Wait); err != nil {
		return nil, err
	}
	return h.guarded(ctx, flowID, expected, func(f *sdk.Flow) error {
		taskID, summary := strings.TrimSpace(w.BlockedTaskID), strings.TrimSpace(w.BlockedSummary)
		to := sdk.FlowWaiting
		if taskID != "" || summary != "" {
			to = sdk.FlowBlocked
		}
		if err := move(f, to); err != nil {
			return err
		}
		f.BlockedTaskID, f.BlockedSummary = taskID, summary
		if w.CurrentStep != "" {
			f.CurrentStep = strings.TrimSpace(w.CurrentStep)
		}
		if w.State != nil {
			f.State = w.State
		}
		if w.Wait != nil {
			f.Wait = w.Wait
		}
		return nil
	})
}

// Resume implements sdk.Host; it queues flow.resumed.
func (h *Host) Resume(ctx context.Context, flowID string, expected int64, r sdk.ResumeRequest) (*sdk.Flow, error) {
	if r.Status == "" {
		r.Status = sdk.FlowQueued
	}
	if r.Status != sdk.FlowQueued && r.Status != sdk.FlowRunning {
		return nil, invalid("a flow resumes as queued or running, not %q", r.Status)
	}
	if err := checkJSON("state", r.State); err != nil {
		return nil, err
	}
	return h.guarded(ctx, flowID, expected, func(f *sdk.Flow) error {
		if err := move(f, r.Status); err != nil {
			return err
		}
		f.Wait = jsonNull
		if r.CurrentStep != "" {
			f.CurrentStep = strings.TrimSpace(r.CurrentStep)
		}
		if r.State != nil {
			f.State = r.State
		}
		data, _ := json.Marshal(map[string]string{"status": string(f.Status)})
		h.appendEvent(f.ID, sdk.EventFlowResumed, "", data)
		return nil
	})
}

// Finish implements sdk.Host.
func (h *Host) Finish(ctx context.Context, flowID string, expected int64, e sdk.EndRequest) (*sdk.Flow, error) {
	return h.end(ctx, flowID, expected, sdk.FlowSucceeded, e)
}

// Fail implements sdk.Host.
func (h *Host) Fail(ctx context.Context, flowID string, expected int64, e sdk.EndRequest) (*sdk.Flow, error) {
	return h.end(ctx, flowID, expected, sdk.FlowFailed, e)
}

func (h *Host) end(ctx context.Context, flowID string, expected int64, to sdk.FlowStatus, e sdk.EndRequest) (*sdk.Flow, error) {
	if err := checkJSON("state", e.State); err != nil {
		return nil, err
	}
	return h.guarded(ctx, flowID, expected, func(f *sdk.Flow) error {
		if err := move(f, to); err != nil {
			return err
		}
		if e.CurrentStep != "" {
			f.CurrentStep = strings.TrimSpace(e.CurrentStep)
		}
		if e.State != nil {
			f.State = e.State
		}
		if to == sdk.FlowFailed {
			f.BlockedTaskID, f.BlockedSummary = strings.TrimSpace(e.BlockedTaskID), strings.TrimSpace(e.BlockedSummary)
		}
		return nil
	})
}

// RequestCancel implements sdk.Host as the engine does: the first request
// queues flow.cancel_requested, queued tasks are cancelled at once (each
// queues task.finished), running tasks are asked to stop, and the flow is
// cancelled when no task is left active, else when the last one finishes.
// A repeated request changes nothing and keeps the revision.
func (h *Host) RequestCancel(ctx context.Context, flowID string, expected int64) (*sdk.Flow, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := h.expect(flowID, expected)
	if err != nil {
		return nil, err
	}
	if f.Status.Terminal() {
		return nil, fmt.Errorf("%w: flow %s is already %s; nothing to cancel", sdk.ErrTerminal, f.ID, f.Status)
	}
	t := now()
	changed := !f.CancelRequested()
	if changed {
		f.CancelRequestedAt = t
		h.appendEvent(f.ID, sdk.EventFlowCancelRequested, "", nil)
	}
	active := 0
	for _, id := range h.flowTasks[f.ID] {
		task, err := h.loadTask(id)
		if err != nil {
			return nil, err
		}
		if !task.Status.Active() {
			continue
		}
		if task.CancelRequestedAt.IsZero() {
			task.CancelRequestedAt = t
		}
		if task.Status == sdk.TaskQueued {
			task.Reason = "cancelled"
			task.Errors = append(task.Errors, "cancelled before it started")
			h.endTask(task, sdk.TaskCancelled, nil)
		} else {
			active++
		}
		task.UpdatedAt = t
		h.putTask(task)
	}
	if active == 0 {
		if err := move(f, sdk.FlowCancelled); err != nil {
			return nil, err
		}
		changed = true
	}
	if changed {
		h.saveFlow(f)
	}
	return f, nil
}

// Log implements sdk.Host; Logs returns what was logged.
func (h *Host) Log(ctx context.Context, level, msg string, fields map[string]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var copied map[string]string
	if fields != nil {
		copied = make(map[string]string, len(fields))
		for k, v := range fields {
			copied[k] = v
		}
	}
	h.logs = append(h.logs, LogEntry{Level: level, Message: msg, Fields: copied})
	return nil
}

// StartTask moves queued task id to running, as the gateway's runner does
// when it starts the process.
func (h *Host) StartTask(id string) (*sdk.Task, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, err := h.loadTask(id)
	if err != nil {
		return nil, err
	}
	if t.Status != sdk.TaskQueued {
		return nil, fmt.Errorf("%w: task %s is %s, not queued", sdk.ErrIllegalTransition, t.ID, t.Status)
	}
	t.Status, t.StartedAt, t.Attempts = sdk.TaskRunning, now(), t.Attempts+1
	t.UpdatedAt = t.StartedAt
	h.putTask(t)
	return t, nil
}

// FinishTask ends task id in terminal status, as the gateway's runner does
// when its process ends: a queued task counts as started and ended at
// once. It queues task.finished with {"status", "exit_code"} (exit code 0
// for succeeded, 1 for failed, none otherwise), and makes the flow
// cancelled if it has a cancel request and this was its last active task.
func (h *Host) FinishTask(id string, status sdk.TaskStatus) (*sdk.Task, error) {
	if !status.Terminal() {
		return nil, invalid("a task finishes in a terminal status, not %q", status)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t, err := h.loadTask(id)
	if err != nil {
		return nil, err
	}
	if t.Status.Terminal() {
		return nil, fmt.Errorf("%w: task %s is already %s and cannot become %s", sdk.ErrTerminal, t.ID, t.Status, status)
	}
	var exit *int
	switch status {
	case sdk.TaskSucceeded:
		exit = new(int)
	case sdk.TaskFailed:
		exit = new(int)
		*exit = 1
	}
	if t.StartedAt.IsZero() {
		t.StartedAt, t.Attempts = now(), t.Attempts+1
	}
	h.endTask(t, status, exit)
	h.putTask(t)
	return t, h.finishCancel(t.FlowID)
}

// endTask stamps a task's terminal move and queues task.finished.
func (h *Host) endTask(t *sdk.Task, status sdk.TaskStatus, exit *int) {
	t.Status, t.ExitCode = status, exit
	t.EndedAt = now()
	t.UpdatedAt = t.EndedAt
	data, _ := json.Marshal(map[string]any{"status": t.Status, "exit_code": t.ExitCode})
	h.appendEvent(t.FlowID, sdk.EventTaskFinished, t.ID, data)
}

// finishCancel makes flow id cancelled when it has a cancel request and no
// active task is left.
func (h *Host) finishCancel(id string) error {
	f, err := h.loadFlow(id)
	if err != nil || !f.CancelRequested() || f.Status.Terminal() {
		return err
	}
	for _, tid := range h.flowTasks[id] {
		t, err := h.loadTask(tid)
		if err != nil {
			return err
		}
		if t.Status.Active() {
			return nil
		}
	}
	if err := move(f, sdk.FlowCancelled); err != nil {
		return err
	}
	h.saveFlow(f)
	return nil
}

// CancelTask implements sdk.Host: a queued task is cancelled at once (and
// task.finished queued); a running one gets a cancel request, which the
// test carries out with FinishTask(id, sdk.TaskCancelled), as a runner
// would.
func (h *Host) CancelTask(ctx context.Context, id string) (*sdk.Task, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	t, err := h.loadTask(id)
	if err != nil {
		return nil, err
	}
	if t.Status.Terminal() {
		return nil, fmt.Errorf("%w: task %s is already %s; nothing to cancel", sdk.ErrTerminal, t.ID, t.Status)
	}
	if t.CancelRequestedAt.IsZero() {
		t.CancelRequestedAt = now()
	}
	if t.Status == sdk.TaskQueued {
		h.endTask(t, sdk.TaskCancelled, nil)
		h.putTask(t)
		return t, h.finishCancel(t.FlowID)
	}
	t.UpdatedAt = now()
	h.putTask(t)
	return t, nil
}
