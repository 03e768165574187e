package engine

import (
	"fmt"

	"github.com/flowgate/flowgate/sdk"
)

// CancelResult says what a cancel did. Flow is the flow after the cancel;
// Active counts child tasks still running, which the runner stops; the flow
// becomes cancelled when the last of them settles.
type CancelResult struct {
	Flow   *sdk.Flow   `json:"flow"`
	Tasks  []*sdk.Task `json:"tasks"`
	Active int         `json:"active"`
}

// CancelFlow is the operator's cancel: it records a sticky cancel request
// on flow id (no expected revision needed), cancels its queued tasks, asks
// for its running tasks to be stopped, and makes the flow cancelled at once
// when no child is active. A terminal flow is refused with ErrTerminal.
func (e *Engine) CancelFlow(id string) (CancelResult, error) {
	var res CancelResult
	err := e.write(func(t *txn) error {
		f, err := loadFlow(t.tx, id)
		if err != nil {
			return err
		}
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
		next, err := t.cancelTask(task)
		if err != nil {
			return CancelResult{}, err
		}
		tasks[i] = next
		if next.Status.Active() {
			active++
		}
	}
	// Cancelling a mirrored flow's task has already re-derived the flow.
	if cur, err := loadFlow(t.tx, f.ID); err != nil {
		return CancelResult{}, err
	} else if cur.Revision != old.Revision {
		old, f = cur, cloneFlow(cur)
		if firstRequest && !f.CancelRequested() {
			f.CancelRequestedAt = t.now
		}
	}
	if active == 0 && !f.Status.Terminal() {
		if err := t.move(f, sdk.FlowCancelled); err != nil {
			return CancelResult{}, err
		}
	}
	if f.Status != old.Status || f.CancelRequestedAt != old.CancelRequestedAt {
		if err := t.saveFlow(old, f); err != nil {
			return CancelResult{}, err
		}
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
