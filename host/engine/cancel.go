package engine

import (
	"fmt"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// CancelResult says what a cancel did. Flow is the flow after the cancel;
// Active counts child tasks still running, which the runner stops; the flow
// becomes cancelled when the last of them settles.
type CancelResult struct {
	Flow   *sdk.Flow      `json:"flow"`
	Tasks  []*stored.Task `json:"tasks"`
	Active int            `json:"active"`
}

// CancelFlow is the operator's cancel: it records a sticky cancel request
// on flow id (no expected revision needed), cancels its queued tasks, asks
// for its running tasks to be stopped, and makes the flow cancelled at once
// when no child is active. by names who asked, for the flow's history
// (the CLI's --by or OS user, the run center's token name); empty means
// CancelByOperator. A terminal flow is refused with ErrTerminal.
func (e *Engine) CancelFlow(id, by string) (CancelResult, error) {
	if by == "" {
		by = CancelByOperator
	}
	var res CancelResult
	err := e.write(func(t *txn) error {
		f, err := loadFlow(t.tx, id)
		if err != nil {
			return err
		}
		t.explain(id, historyNote{By: by})
		res, err = t.cancelFlow(f)
		return err
	})
	return res, err
}

// RequestCancel is the controller's cancel: CancelFlow guarded by the
// expected revision of managed flow id.
func (e *Engine) RequestCancel(id string, expected int64) (CancelResult, error) {
	var res CancelResult
	err := e.write(func(t *txn) error {
		f, err := loadFlow(t.tx, id)
		if err != nil {
			return err
		}
		if f.SyncMode != sdk.SyncManaged {
			return fmt.Errorf("%w: flow %s is %s; cancel its task instead", sdk.ErrNotManaged, id, f.SyncMode)
		}
		if f.Revision != expected {
			return &sdk.RevisionConflictError{Expected: expected, Current: f}
		}
		t.explain(id, historyNote{By: "controller " + f.ControllerID})
		res, err = t.cancelFlow(f)
		return err
	})
	return res, err
}

func (t *txn) cancelFlow(old *sdk.Flow) (CancelResult, error) {
	if old.Status.Terminal() {
		return CancelResult{}, fmt.Errorf("%w: flow %s is already %s; nothing to cancel", sdk.ErrTerminal, old.ID, old.Status)
	}
	tasks, err := flowTasks(t.tx, old.ID)
	if err != nil {
		return CancelResult{}, err
	}
	f := cloneFlow(old)
	firstRequest := !f.CancelRequested()
	if firstRequest {
		f.CancelRequestedAt = t.now
		// The controller hears of the request before the task.finished
		// events of the children it cancels.
		if err := t.appendEvent(f, sdk.EventFlowCancelRequested, "", nil); err != nil {
			return CancelResult{}, err
		}
	}
	active := 0
	for i, task := range tasks {
		if !task.Status.Active() {
			continue
		}
		next, err := t.stopTask(task)
		if err != nil {
			return CancelResult{}, err
		}
		// The flow follows its tasks here, not through afterTaskWrite,
		// so that the cancel is one write to the flow (one revision): a
		// mirrored flow is re-derived, and a managed one hears of each
		// task that settled and is made cancelled below.
		if f.SyncMode == sdk.SyncTaskMirrored {
			f = t.mirrorOf(f, next)
		} else if next.Status.Terminal() {
			if err := t.taskFinished(f, next, ""); err != nil {
				return CancelResult{}, err
			}
		}
		tasks[i] = next
		if next.Status.Active() {
			active++
		}
	}
	if active == 0 && !f.Status.Terminal() {
		if err := t.move(f, sdk.FlowCancelled); err != nil {
			return CancelResult{}, err
		}
	}
	// A repeated cancel that moved nothing (its tasks were already asked
	// to stop) leaves the flow, and its revision, as they are.
	if !firstRequest && !mirrorChanged(old, f) {
		return CancelResult{Flow: f, Tasks: tasks, Active: active}, nil
	}
	if err := t.saveFlow(old, f); err != nil {
		return CancelResult{}, err
	}
	return CancelResult{Flow: f, Tasks: tasks, Active: active}, nil
}

// finishCancel makes managed flow f cancelled when it has a cancel request
// and no active child is left. It runs after every child task settles.
func (t *txn) finishCancel(f *sdk.Flow) error {
	if f.SyncMode != sdk.SyncManaged || !f.CancelRequested() || f.Status.Terminal() {
		return nil
	}
	tasks, err := flowTasks(t.tx, f.ID)
	if err != nil {
		return err
	}
	for _, task := range tasks {
		if task.Status.Active() {
			return nil
		}
	}
	next := cloneFlow(f)
	if err := t.move(next, sdk.FlowCancelled); err != nil {
		return err
	}
	return t.saveFlow(f, next)
}

// CancelTask cancels task id: a queued task becomes cancelled at once; a
// running task gets a cancel request that its runner carries out. A
// terminal task is refused with ErrTerminal.
func (e *Engine) CancelTask(id string) (*stored.Task, error) {
	var out *stored.Task
	err := e.write(func(t *txn) error {
		task, err := loadTask(t.tx, id)
		if err != nil {
			return err
		}
		out, err = t.cancelTask(task)
		return err
	})
	return out, err
}

// cancelTask cancels one task and keeps its flow in step.
func (t *txn) cancelTask(old *stored.Task) (*stored.Task, error) {
	task, err := t.stopTask(old)
	if err != nil {
		return nil, err
	}
	return task, t.afterTaskWrite(old, task)
}

// stopTask writes the cancel of one task and leaves its flow to the
// caller: a queued task becomes cancelled, a running one gets a cancel
// request for its runner.
func (t *txn) stopTask(old *stored.Task) (*stored.Task, error) {
	if old.Status.Terminal() {
		return nil, fmt.Errorf("%w: task %s is already %s; nothing to cancel", sdk.ErrTerminal, old.ID, old.Status)
	}
	task := *old
	if task.CancelRequestedAt.IsZero() {
		task.CancelRequestedAt = t.now
	}
	if task.Status == sdk.TaskQueued {
		t.endTask(&task, sdk.TaskCancelled, "cancelled before it started")
		task.Reason = "cancelled"
	} else {
		t.notify(TaskCancelRequested, task.ID)
	}
	return &task, t.saveTask(old, &task)
}
