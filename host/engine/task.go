package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// CreateTaskInput describes a new task.
type CreateTaskInput struct {
	// FlowID links the task to a managed flow. If empty, the task is a
	// detached single run and gets its own task_mirrored flow.
	FlowID string
	// OwnerKey defaults to the flow's owner; it is required for a detached
	// run. A key that differs from the flow's is refused.
	OwnerKey string
	// Runtime defaults to "cli".
	Runtime string
	Label   string
	Spec    sdk.TaskSpec
	// IdempotencyKey, if set, makes creation idempotent: a second create
	// with the same key returns the first task.
	IdempotencyKey string
	// Status is queued (the default) or running.
	Status sdk.TaskStatus
	// HeldEnv holds the values of the variables Spec.SecretEnv names and,
	// with Spec.InheritEnv, the caller's environment. The engine never
	// stores it: the gateway's runner holds it in memory for the task's
	// attempts.
	HeldEnv map[string]string
	// Budget is the soft usage budget of a detached task's chain (its
	// mirrored flow's); a task in a managed flow shares the flow's.
	Budget *sdk.Budget
	// DetachedBudget asks the gateway for its detached runs' max budget
	// (limits.detached_max_budget, 24 h by default) when Spec.MaxBudget
	// is zero: tasks run --detach sets it unless --max-budget was given.
	// The gateway fills Spec.MaxBudget before the engine sees the task;
	// the engine ignores it.
	DetachedBudget bool
	// DetachedNoProgress asks the gateway for its detached runs'
	// no-progress budget (limits.detached_no_progress_budget, 1 h by
	// default) when Spec.NoProgressBudget is zero: tasks run --detach
	// sets it unless --no-progress-budget was given. Like DetachedBudget,
	// the gateway fills the spec and the engine ignores it.
	DetachedNoProgress bool
}

func (in *CreateTaskInput) normalize() error {
	in.FlowID = strings.TrimSpace(in.FlowID)
	in.OwnerKey = strings.TrimSpace(in.OwnerKey)
	in.Runtime = strings.TrimSpace(in.Runtime)
	in.Label = strings.TrimSpace(in.Label)
	in.IdempotencyKey = strings.TrimSpace(in.IdempotencyKey)
	if in.Runtime == "" {
		in.Runtime = "cli"
	}
	if strings.ContainsAny(in.Runtime, " /\t\n") {
		return invalid("runtime %q must be one word", in.Runtime)
	}
	if in.Status == "" {
		in.Status = sdk.TaskQueued
	}
	if in.Status != sdk.TaskQueued && in.Status != sdk.TaskRunning {
		return invalid("a task is created queued or running, not %q", in.Status)
	}
	if in.Runtime == sdk.RuntimeAgent && in.Spec.Retry == nil {
		in.Spec.Retry = sdk.AgentRetryPolicy()
	}
	if err := ValidateSpec(in.Spec); err != nil {
		return err
	}
	for _, name := range in.Spec.SecretEnv {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return invalid("secret env name %q is empty or holds '=' or NUL", name)
		}
		if _, ok := in.Spec.Env[name]; ok {
			return invalid("%s is both a secret and a plain env variable; pass it one way", name)
		}
	}
	if in.FlowID == "" && in.OwnerKey == "" {
		return invalid("a detached task needs an owner key")
	}
	if in.FlowID != "" && in.Budget != nil {
		return invalid("a task in flow %s shares its flow's budget; set the budget when the flow is created", in.FlowID)
	}
	if err := checkBudget(in.Budget); err != nil {
		return err
	}
	return checkKeyParts(map[string]string{"owner key": in.OwnerKey, "idempotency key": in.IdempotencyKey, "flow id": in.FlowID, "runtime": in.Runtime})
}

// maxInput bounds a task's inline stdin text, which lives in its record.
const maxInput = 512 << 10

// CreateTask stores a new task. With a FlowID it links to that managed
// flow, refusing a missing flow (ErrNotFound), a flow that is not managed
// (ErrNotManaged), another owner's flow (ErrOwnerMismatch), a flow with a
// cancel request (ErrCancelRequested) and a terminal flow (ErrTerminal).
// Without one it creates the task's mirrored flow in the same transaction.
// created is false when the idempotency key already named a task: that task
// is returned and nothing is written.
func (e *Engine) CreateTask(in CreateTaskInput) (task *stored.Task, created bool, err error) {
	if err := in.normalize(); err != nil {
		return nil, false, err
	}
	err = e.write(func(t *txn) error {
		var err error
		task, created, err = e.createTask(t, in)
		return err
	})
	return task, created, err
}

// createTask is CreateTask's write, in transaction t, of the task in
// describes (normalized).
func (e *Engine) createTask(t *txn, in CreateTaskInput) (*stored.Task, bool, error) {
	if in.IdempotencyKey != "" {
		existing, err := findIdempotent(t.tx, in)
		if err != nil || existing != nil {
			return existing, false, err
		}
	}
	var flow *sdk.Flow
	if in.FlowID != "" {
		var err error
		if flow, err = linkableFlow(t.tx, in); err != nil {
			return nil, false, err
		}
	}
	if err := checkTaskNotify(in.Spec, flow); err != nil {
		return nil, false, err
	}
	id, err := e.ids.next(t.now)
	if err != nil {
		return nil, false, err
	}
	nt := &stored.Task{
		Task: sdk.Task{
			ID: id, FlowID: in.FlowID, OwnerKey: in.OwnerKey, Runtime: in.Runtime, Label: in.Label,
			Spec: in.Spec, IdempotencyKey: in.IdempotencyKey, Status: in.Status, CreatedAt: t.now,
		},
	}
	if nt.OwnerKey == "" {
		nt.OwnerKey = flow.OwnerKey
	}
	if in.Status == sdk.TaskRunning {
		nt.StartedAt, nt.Attempts = t.now, 1
		startAttemptTime(nt, t.now)
	}
	startedNow, err := t.startAtCreation(nt)
	if err != nil {
		return nil, false, err
	}
	if flow == nil {
		if flow, err = e.createMirror(t, nt); err != nil {
			return nil, false, err
		}
		nt.FlowID = flow.ID
		if err := t.setChainBudget(flow, in.Budget); err != nil {
			return nil, false, err
		}
	}
	if in.IdempotencyKey != "" {
		if err := t.putRaw(idemKey(in.IdempotencyKey), []byte(nt.ID)); err != nil {
			return nil, false, err
		}
	}
	if err := t.saveTask(nil, nt); err != nil {
		return nil, false, err
	}
	if nt.Status == sdk.TaskQueued && Runnable(nt) {
		t.notify(TaskQueued, nt.ID)
	}
	t.queuedNew = t.queuedNew || nt.Status == sdk.TaskQueued
	if err := t.afterTaskWrite(nil, nt); err != nil {
		return nil, false, err
	}
	if startedNow {
		t.handAtCommit(nt)
	}
	return nt, true, nil
}

// findIdempotent returns the task that already claimed in's idempotency
// key, or nil. A key claimed in another flow is refused.
func findIdempotent(tx store.ReadTx, in CreateTaskInput) (*stored.Task, error) {
	it, err := tx.Get(idemKey(in.IdempotencyKey))
	if errors.Is(err, store.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	existing, err := loadTask(tx, string(it.Value))
	if err != nil {
		return nil, err
	}
	if in.FlowID != "" && existing.FlowID != in.FlowID {
		return nil, invalid("idempotency key %q already belongs to task %s in flow %s; use another key", in.IdempotencyKey, existing.ID, existing.FlowID)
	}
	return existing, nil
}

// linkableFlow loads the flow a new task links to and checks it accepts
// children, in the reference's order.
func linkableFlow(tx store.ReadTx, in CreateTaskInput) (*sdk.Flow, error) {
	f, err := loadFlow(tx, in.FlowID)
	if err != nil {
		return nil, err
	}
	switch {
	case f.SyncMode != sdk.SyncManaged:
		return nil, fmt.Errorf("%w: flow %s is %s and does not accept child tasks", sdk.ErrNotManaged, f.ID, f.SyncMode)
	case in.OwnerKey != "" && in.OwnerKey != f.OwnerKey:
		return nil, fmt.Errorf("%w: task owner %q does not match flow %s owner %q", sdk.ErrOwnerMismatch, in.OwnerKey, f.ID, f.OwnerKey)
	case f.CancelRequested():
		return nil, fmt.Errorf("%w: flow %s is being cancelled and accepts no new tasks", sdk.ErrCancelRequested, f.ID)
	case f.Status.Terminal():
		return nil, fmt.Errorf("%w: flow %s is already %s and accepts no new tasks", sdk.ErrTerminal, f.ID, f.Status)
	}
	c, err := loadChain(tx, f.Chain())
	if err != nil {
		return nil, err
	}
	if why := c.Halted(); why != "" {
		return nil, invalid("flow %s accepts no new tasks: %s", f.ID, why)
	}
	return f, nil
}

// Runnable reports whether the runner can start t: it has a command.
func Runnable(t *stored.Task) bool { return len(t.Spec.Argv) > 0 || t.Spec.Shell != "" }

// StartInput is what StartTask records about the processes; zero fields
// are recorded later with SetProcess.
type StartInput struct {
	// Gateway is the member id of the gateway starting the attempt
	// (StartTask only); empty with one gateway.
	Gateway string
	// Boot is the machine's boot (shim.BootID) when the attempt's shim
	// will claim it without syncing (StartTask only; stored.Task.Boot).
	Boot          string
	PID           int
	PIDStartTime  uint64
	ShimPID       int
	ShimStartTime uint64
}

// StartTask moves task id from queued to running and counts an attempt:
// the returned task's Attempts is the number of the attempt now starting.
// The runner records this before it launches anything, so that a crash
// between the two can never start an attempt twice. It is the claim of a
// queued task: of several gateways starting it at once, one succeeds (a
// guarded write) and the others are refused with ErrIllegalTransition.
func (e *Engine) StartTask(id string, in StartInput) (*stored.Task, error) {
	return e.changeTask(id, startTask(in))
}

// startTask is StartTask's change of the task.
func startTask(in StartInput) func(t *txn, task *stored.Task) error {
	return func(t *txn, task *stored.Task) error {
		if err := checkTaskMove(task, sdk.TaskRunning); err != nil {
			return err
		}
		if task.Status == sdk.TaskRunning {
			return fmt.Errorf("%w: task %s is already running", sdk.ErrIllegalTransition, task.ID)
		}
		task.Status = sdk.TaskRunning
		task.Attempts++
		task.RetryAt = time.Time{}
		task.PID, task.PIDStartTime = in.PID, in.PIDStartTime
		task.ShimPID, task.ShimStartTime = in.ShimPID, in.ShimStartTime
		task.Gateway, task.Boot = in.Gateway, in.Boot
		if task.StartedAt.IsZero() {
			task.StartedAt = t.now
		}
		startAttemptTime(task, t.now)
		return nil
	}
}

// SetProcess records the identity of attempt's shim and child once they
// are known. It is a no-op refusal (ErrIllegalTransition) when the task is
// no longer running that attempt.
func (e *Engine) SetProcess(id string, attempt int, in StartInput) (*stored.Task, error) {
	return e.changeTask(id, func(t *txn, task *stored.Task) error {
		if err := runningAttempt(task, attempt); err != nil {
			return err
		}
		if in.ShimPID != 0 {
			task.ShimPID, task.ShimStartTime = in.ShimPID, in.ShimStartTime
		}
		if in.PID != 0 {
			task.PID, task.PIDStartTime = in.PID, in.PIDStartTime
		}
		return nil
	})
}

// runningAttempt refuses a change aimed at an attempt that is not the one
// running (a stale report from an earlier attempt or a finished task).
func runningAttempt(task *stored.Task, attempt int) error {
	if task.Status.Terminal() {
		return fmt.Errorf("%w: task %s is already %s", sdk.ErrTerminal, task.ID, task.Status)
	}
	if task.Status != sdk.TaskRunning || (attempt != 0 && task.Attempts != attempt) {
		return fmt.Errorf("%w: task %s is %s at attempt %d, not running attempt %d", sdk.ErrIllegalTransition, task.ID, task.Status, task.Attempts, attempt)
	}
	return nil
}

// BeginDiagnosis records, before the diagnoser starts, that the failed
// attempt of running task id is being diagnosed: a gateway that restarts
// meanwhile finds the record and marks the diagnosis interrupted instead
// of running it again.
func (e *Engine) BeginDiagnosis(id string, attempt int, class sdk.FailureClass) (*stored.Task, error) {
	return e.changeTask(id, func(t *txn, task *stored.Task) error {
		if err := runningAttempt(task, attempt); err != nil {
			return err
		}
		task.Class = class
		task.Diagnosis = &sdk.Diagnosis{Attempt: attempt, State: sdk.DiagnosisRunning, StartedAt: t.now}
		return nil
	})
}

// endTask stamps the bookkeeping of a terminal move.
func (t *txn) endTask(task *stored.Task, to sdk.TaskStatus, errText string) {
	endAttemptTime(task, t.now)
	task.Status = to
	task.EndedAt = t.now
	if in := task.Interrupted; in != nil && in.ChildStillRunning {
		// The child left running at a give-up is gone once the task
		// ended (the runner records the end when it and its group are).
		ended := *in
		ended.ChildStillRunning = false
		task.Interrupted = &ended
	}
	if task.CleanupAfter.IsZero() {
		task.CleanupAfter = t.now.Add(t.retention)
	}
	if errText != "" {
		task.Errors = append(task.Errors, errText)
	}
}

// changeTask loads task id, lets fn change a copy and saves it with the
// follow-up a task write needs.
func (e *Engine) changeTask(id string, fn func(t *txn, task *stored.Task) error) (*stored.Task, error) {
	var out *stored.Task
	err := e.write(func(t *txn) (err error) {
		out, err = t.changeTask(id, fn)
		return err
	})
	return out, err
}

// changeTask is Engine.changeTask in the caller's transaction. fn's
// refusal is returned before anything is written.
func (t *txn) changeTask(id string, fn func(t *txn, task *stored.Task) error) (*stored.Task, error) {
	old, err := loadTask(t.tx, id)
	if err != nil {
		return nil, err
	}
	task := *old
	task.Errors = append([]string(nil), old.Errors...)
	if err := fn(t, &task); err != nil {
		return nil, err
	}
	if err := t.saveTask(old, &task); err != nil {
		return nil, err
	}
	return &task, t.afterTaskWrite(old, &task)
}

// afterTaskWrite keeps the task's flow in step: a mirrored flow is
// re-derived from the task; a managed flow gets task.finished when the task
// settles, and becomes cancelled if that was its last active child under a
// cancel request.
func (t *txn) afterTaskWrite(old, task *stored.Task) error {
	it, err := flowItem(t.tx, task.FlowID)
	if err != nil {
		return err
	}
	settled := task.Status.Terminal() && (old == nil || !old.Status.Terminal())
	if !settled && !corrected(old, task) {
		// A managed flow is told of nothing: its head says whether the
		// flow is one, without decoding its state.
		h, err := decodeFlowHead(it)
		if err != nil || h.SyncMode != sdk.SyncTaskMirrored {
			return err
		}
	}
	f, err := decodeRecord[sdk.Flow](it)
	if err != nil {
		return err
	}
	if f.SyncMode == sdk.SyncTaskMirrored {
		if corrected(old, task) {
			t.explain(f.ID, historyNote{Kind: HistoryCorrected, Summary: "task " + task.ID + " " + task.Errors[len(task.Errors)-1],
				Data: map[string]any{"task_id": task.ID}})
		}
		return t.syncMirror(f, task)
	}
	if corrected(old, task) {
		return t.taskFinished(f, task, old.Status)
	}
	if !settled {
		return nil
	}
	if err := t.taskFinished(f, task, ""); err != nil {
		return err
	}
	return t.finishCancel(f)
}

// taskFinished queues task.finished for managed flow f. A failure's class
// and the diagnoser's recommendation ride along, so the controller sees a
// revise without reading the task. A correction (see CorrectLostTask)
// names in corrected_from the status the earlier task.finished carried.
func (t *txn) taskFinished(f *sdk.Flow, task *stored.Task, correctedFrom sdk.TaskStatus) error {
	body := map[string]any{"status": task.Status, "exit_code": task.ExitCode}
	if correctedFrom != "" {
		body["corrected_from"] = correctedFrom
	}
	if task.Class != "" && task.Status != sdk.TaskSucceeded {
		body["class"] = task.Class
	}
	if d := task.Diagnosis; d != nil {
		body["diagnosis"] = map[string]any{"state": d.State, "recommendation": d.Recommendation}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return t.appendEvent(f, sdk.EventTaskFinished, task.ID, data)
}

func loadTask(tx store.ReadTx, id string) (*stored.Task, error) {
	task, err := getRecord[stored.Task](tx, taskKey(id))
	if errors.Is(err, store.ErrKeyNotFound) {
		return nil, fmt.Errorf("%w: task %q does not exist; list tasks with flowgate tasks list", sdk.ErrNotFound, id)
	}
	return task, err
}

// saveTask writes task over old (nil for a new task), keeping the indexes
// in step.
func (t *txn) saveTask(old, task *stored.Task) error {
	var oldKeys []string
	if old != nil {
		oldKeys = taskIndexKeys(old)
	}
	task.UpdatedAt = t.now
	b, err := fitTask(task)
	if err != nil {
		return fmt.Errorf("encode %s: %w", taskKey(task.ID), err)
	}
	if err := t.reindex(oldKeys, taskIndexKeys(task)); err != nil {
		return err
	}
	if err := t.queueNotice(old, task, b); err != nil {
		return err
	}
	if err := t.putRaw(taskKey(task.ID), b); err != nil {
		return err
	}
	return t.taskHistory(old, task)
}
