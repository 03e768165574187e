package engine

import (
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// RetryResult is what a retry did: the flow, queued again under its id,
// its new task, and which run of the flow that task is.
type RetryResult struct {
	Flow *sdk.Flow    `json:"flow"`
	Task *stored.Task `json:"task"`
	// Attempt numbers the flow's runs: its first task is attempt 1, so
	// the first retry is attempt 2.
	Attempt int `json:"attempt"`
}

// RetryFlow runs task_mirrored flow id again: in one transaction it adds
// a new queued task with its latest task's command (RetryOf names that
// task) and moves the flow back to queued, clearing its end, blocked
// fields and cancel request, with a retry entry in its history naming by
// (empty: CancelByOperator). The flow keeps its id, history and chain; the
// earlier tasks keep their statuses and logs. A new task rather than a new
// attempt of the old one, because a task's terminal status is final: its
// task.finished event, its notices and the correction of a lost mark all
// rely on that, as the reference's retry does (a new task with
// parentTaskId).
//
// It is guarded by the flow's revision, read by the caller: a stale one
// fails with a *sdk.RevisionConflictError carrying the flow as it is, so
// of two concurrent retries of the same revision one runs. It refuses,
// changing nothing: a managed flow (continue it instead), a flow that is
// not blocked, failed, cancelled or lost (sdk.CheckFlowRetry), a task
// whose secret or inherited env values were held in a gateway's memory
// only (they are gone), and a chain that accepts no new work.
func (e *Engine) RetryFlow(id string, expected int64, by string) (RetryResult, error) {
	if expected <= 0 {
		return RetryResult{}, invalid("a retry of flow %s needs the revision it was read at (--expected-revision, from flowgate tasks flow show)", id)
	}
	if by == "" {
		by = CancelByOperator
	}
	var res RetryResult
	err := e.write(func(t *txn) error {
		res = RetryResult{}
		f, err := loadFlow(t.tx, id)
		if err != nil {
			return err
		}
		if f.SyncMode == sdk.SyncManaged {
			return sdk.CheckFlowRetry(f)
		}
		if f.Revision != expected {
			return &sdk.RevisionConflictError{Expected: expected, Current: f}
		}
		if err := sdk.CheckFlowRetry(f); err != nil {
			return err
		}
		prev, runs, err := retryable(t, f)
		if err != nil {
			return err
		}
		nid, err := e.ids.next(t.now)
		if err != nil {
			return err
		}
		task := &stored.Task{
			Task: sdk.Task{
				ID: nid, FlowID: f.ID, OwnerKey: prev.OwnerKey, Runtime: prev.Runtime, Label: prev.Label,
				Spec: prev.Spec, Status: sdk.TaskQueued, CreatedAt: t.now, RetryOf: prev.ID,
			},
		}
		next := mirrored(f, task, t.now)
		next.CancelRequestedAt = time.Time{}
		res = RetryResult{Flow: next, Task: task, Attempt: runs + 1}
		t.explain(f.ID, historyNote{Kind: HistoryRetry, By: by,
			Summary: fmt.Sprintf("retried by %s: attempt %d runs task %s again as task %s", by, res.Attempt, prev.ID, task.ID),
			Data:    map[string]any{"attempt": res.Attempt, "task_id": task.ID, "retry_of": prev.ID}})
		if err := t.saveFlow(f, next); err != nil {
			return err
		}
		if err := t.saveTask(nil, task); err != nil {
			return err
		}
		t.notify(TaskQueued, task.ID)
		return nil
	})
	return res, err
}

// retryable returns the latest task of mirrored flow f, which a retry
// runs again, and how many tasks f has, or why it cannot be run again.
func retryable(t *txn, f *sdk.Flow) (*stored.Task, int, error) {
	tasks, err := flowTasks(t.tx, f.ID)
	if err != nil {
		return nil, 0, err
	}
	if len(tasks) == 0 {
		return nil, 0, invalid("flow %s has no task to run again; start a new run with flowgate tasks run", f.ID)
	}
	prev := tasks[len(tasks)-1]
	switch {
	case prev.Status.Active():
		return nil, 0, fmt.Errorf("%w: flow %s's task %s is still %s; wait for it to end", sdk.ErrIllegalTransition, f.ID, prev.ID, prev.Status)
	case !Runnable(prev):
		return nil, 0, invalid("task %s of flow %s has no command to run again", prev.ID, f.ID)
	case len(prev.Spec.SecretEnv) > 0 || prev.Spec.InheritEnv:
		return nil, 0, invalid("task %s of flow %s ran with secret or inherited env values, which were held in a gateway's memory only and are gone; start it anew with flowgate tasks run and its --secret-env or --inherit-env", prev.ID, f.ID)
	}
	c, err := loadChain(t.tx, f.Chain())
	if err != nil {
		return nil, 0, err
	}
	if why := c.Halted(); why != "" {
		return nil, 0, invalid("flow %s accepts no new run: %s", f.ID, why)
	}
	return prev, len(tasks), nil
}
