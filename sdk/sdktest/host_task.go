package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

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

// maxInput bounds a task's inline stdin text, as the engine bounds it.
const maxInput = 512 << 10

// CreateTask implements sdk.Host. The task is queued; StartTask and
// FinishTask move it on.
func (h *Host) CreateTask(ctx context.Context, req sdk.TaskRequest) (*sdk.Task, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	req, err := normalTask(req)
	if err != nil {
		return nil, false, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, err := h.idempotent(req); t != nil || err != nil {
		return t, false, err
	}
	f, err := h.loadFlow(req.FlowID)
	if err != nil {
		return nil, false, err
	}
	if err := acceptsTasks(f); err != nil {
		return nil, false, err
	}
	return h.createTask(f, req), true, nil
}

// normalTask trims req's fields, defaults its runtime to "cli", and
// checks it as the engine does.
func normalTask(req sdk.TaskRequest) (sdk.TaskRequest, error) {
	req.FlowID, req.IdempotencyKey = strings.TrimSpace(req.FlowID), strings.TrimSpace(req.IdempotencyKey)
	req.Runtime, req.Label = strings.TrimSpace(req.Runtime), strings.TrimSpace(req.Label)
	if req.Runtime == "" {
		req.Runtime = "cli"
	}
	return req, checkTaskRequest(req.FlowID, req.Runtime, req.Spec)
}

// idempotent returns the task that already has req's idempotency key, or
// nil; a key of a task in another flow is refused. The caller holds h.mu.
func (h *Host) idempotent(req sdk.TaskRequest) (*sdk.Task, error) {
	id, ok := h.keys[req.IdempotencyKey]
	if !ok || req.IdempotencyKey == "" {
		return nil, nil
	}
	t, err := h.loadTask(id)
	if err != nil {
		return nil, err
	}
	if t.FlowID != req.FlowID {
		return nil, invalid("idempotency key %q already belongs to task %s in flow %s; use another key", req.IdempotencyKey, t.ID, t.FlowID)
	}
	return t, nil
}

// acceptsTasks refuses a flow that accepts no new task, as the engine
// does.
func acceptsTasks(f *sdk.Flow) error {
	switch {
	case f.CancelRequested():
		return fmt.Errorf("%w: flow %s is being cancelled and accepts no new tasks", sdk.ErrCancelRequested, f.ID)
	case f.Status.Terminal():
		return fmt.Errorf("%w: flow %s is already %s and accepts no new tasks", sdk.ErrTerminal, f.ID, f.Status)
	}
	return nil
}

// createTask stores a new queued task of flow f for normalized req. The
// caller holds h.mu and has checked req.
func (h *Host) createTask(f *sdk.Flow, req sdk.TaskRequest) *sdk.Task {
	t := &sdk.Task{
		ID: h.nextID("task"), FlowID: f.ID, OwnerKey: f.OwnerKey, Runtime: req.Runtime,
		Label: req.Label, Spec: req.Spec, IdempotencyKey: req.IdempotencyKey,
		Status: sdk.TaskQueued, CreatedAt: now(),
	}
	t.UpdatedAt = t.CreatedAt
	h.putTask(t)
	h.flowTasks[f.ID] = append(h.flowTasks[f.ID], t.ID)
	if req.IdempotencyKey != "" {
		h.keys[req.IdempotencyKey] = t.ID
	}
	return t
}

// checkTaskRequest refuses a task request the engine refuses, with
// sdk.ErrInvalid.
func checkTaskRequest(flowID, runtime string, spec sdk.TaskSpec) error {
	switch {
	case flowID == "":
		return invalid("a controller's task needs a flow id")
	case strings.ContainsAny(runtime, " /\t\n"):
		return invalid("runtime %q must be one word", runtime)
	case len(spec.Argv) > 0 && spec.Shell != "":
		return invalid("a task runs either argv or a shell command line, not both")
	case spec.Stdin != "" && spec.Input != "":
		return invalid("a task reads stdin from a file or from input text, not both")
	case len(spec.Input) > maxInput:
		return invalid("input text is %d bytes; at most %d fit in a task record (pass a file with stdin instead)", len(spec.Input), maxInput)
	}
	return nil
}

// StartTask moves queued task id to running and counts an attempt, as the
// gateway's runner does when it starts the process. A task that has ended
// is refused with sdk.ErrTerminal, a running one with
// sdk.ErrIllegalTransition.
func (h *Host) StartTask(id string) (*sdk.Task, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t, err := h.loadTask(id)
	if err != nil {
		return nil, err
	}
	if err := start(t); err != nil {
		return nil, err
	}
	h.putTask(t)
	return t, nil
}

// start moves t to running under the state machine and counts an attempt.
func start(t *sdk.Task) error {
	if err := sdk.CheckTaskMove(t, sdk.TaskRunning); err != nil {
		return err
	}
	if t.Status == sdk.TaskRunning {
		return fmt.Errorf("%w: task %s is already running", sdk.ErrIllegalTransition, t.ID)
	}
	t.Status, t.Attempts, t.RetryAt = sdk.TaskRunning, t.Attempts+1, time.Time{}
	if t.StartedAt.IsZero() {
		t.StartedAt = now()
	}
	t.UpdatedAt = now()
	return nil
}

// FinishTask ends task id in terminal status, as the gateway's runner does
// when its process ends. A queued task is started first (queued → running
// → status, one attempt), as a runner would have. The task's Result is
// what opts say (Stdout, Result); by default it is the result of an empty
// output, never nil, as the runner records it. The exit code is 0 for
// succeeded, 1 for failed and none otherwise. It queues task.finished with
// {"status", "exit_code"} and makes the flow cancelled if it has a cancel
// request and this was its last active task. A task that has ended is
// refused with sdk.ErrTerminal.
func (h *Host) FinishTask(id string, status sdk.TaskStatus, opts ...FinishOption) (*sdk.Task, error) {
	if !status.Terminal() {
		return nil, invalid("a task finishes in a terminal status, not %q", status)
	}
	fin := finishing(opts)
	h.mu.Lock()
	defer h.mu.Unlock()
	t, err := h.loadTask(id)
	if err != nil {
		return nil, err
	}
	if t.Status == sdk.TaskQueued {
		if err := start(t); err != nil {
			return nil, err
		}
	}
	if err := sdk.CheckTaskMove(t, status); err != nil {
		return nil, err
	}
	switch status {
	case sdk.TaskSucceeded:
		t.ExitCode = new(int)
	case sdk.TaskFailed:
		t.ExitCode = new(int)
		*t.ExitCode = 1
	}
	t.Result = fin.result
	h.endTask(t, status, "")
	h.putTask(t)
	return t, h.finishCancel(t.FlowID)
}

// endTask stamps a task's terminal move, appends errText to its errors if
// set, and queues task.finished.
func (h *Host) endTask(t *sdk.Task, status sdk.TaskStatus, errText string) {
	t.Status = status
	t.EndedAt = now()
	t.UpdatedAt = t.EndedAt
	if errText != "" {
		t.Errors = append(t.Errors, errText)
	}
	data, _ := json.Marshal(map[string]any{"status": t.Status, "exit_code": t.ExitCode})
	h.appendEvent(t.FlowID, sdk.EventTaskFinished, t.ID, data)
}

// cancelTask cancels active task t as the engine does: it records the
// cancel request, and a queued task ends cancelled at once (task.finished
// queued); a running one is left for its runner to stop. The caller saves
// t.
func (h *Host) cancelTask(t *sdk.Task) {
	if t.CancelRequestedAt.IsZero() {
		t.CancelRequestedAt = now()
	}
	t.UpdatedAt = now()
	if t.Status == sdk.TaskQueued {
		h.endTask(t, sdk.TaskCancelled, "cancelled before it started")
		t.Reason = "cancelled"
	}
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
// would. A task that has ended is refused with sdk.ErrTerminal.
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
	h.cancelTask(t)
	h.putTask(t)
	return t, h.finishCancel(t.FlowID)
}
