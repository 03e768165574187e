package engine

import (
	"cmp"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// mirrorStatus derives a mirrored flow's status from its task.
func mirrorStatus(s sdk.TaskStatus) sdk.FlowStatus {
	switch s {
	case sdk.TaskRunning:
		return sdk.FlowRunning
	case sdk.TaskSucceeded:
		return sdk.FlowSucceeded
	case sdk.TaskBlocked:
		return sdk.FlowBlocked
	case sdk.TaskFailed, sdk.TaskTimedOut:
		return sdk.FlowFailed
	case sdk.TaskCancelled:
		return sdk.FlowCancelled
	case sdk.TaskLost:
		return sdk.FlowLost
	}
	return sdk.FlowQueued
}

// mirrorGoal is how a mirrored flow names its task.
func mirrorGoal(task *stored.Task) string {
	if g := task.Title(); g != "" {
		return g
	}
	return "Background task"
}

// createMirror stores the task_mirrored flow of a detached task.
func (e *Engine) createMirror(t *txn, task *stored.Task) (*sdk.Flow, error) {
	id, err := e.ids.next(t.now)
	if err != nil {
		return nil, err
	}
	f := &sdk.Flow{
		ID: id, SyncMode: sdk.SyncTaskMirrored, OwnerKey: task.OwnerKey,
		Status: mirrorStatus(task.Status), Goal: mirrorGoal(task),
		NotifyPolicy: cmp.Or(task.Spec.NotifyPolicy, sdk.NotifyDoneOnly), CreatedAt: t.now, ChainID: id,
		NotifyTo: task.Spec.NotifyTo, NotifyTemplate: task.Spec.NotifyTemplate,
	}
	if q := t.createdQueued[task.ID]; q != nil {
		// Its task starts at its creation (startnow.go): the flow tells
		// its creation queued and its start, as two writes would have.
		was := *f
		was.Status = mirrorStatus(q.Status)
		return f, t.saveFlowFrom(nil, &was, f)
	}
	return f, t.saveFlow(nil, f)
}

// syncMirror re-derives mirrored flow f from its task and saves it when
// anything changed, so identical syncs do not bump the revision. A task
// that a retry has replaced (see RetryFlow) no longer speaks for the
// flow: a late write to it (a lost mark corrected) leaves the flow alone.
func (t *txn) syncMirror(f *sdk.Flow, task *stored.Task) error {
	latest, err := latestTaskID(t.tx, f.ID)
	if err != nil || latest != task.ID {
		return err
	}
	next := t.mirrorOf(f, task)
	if !mirrorChanged(f, next) {
		return nil
	}
	return t.saveFlow(f, next)
}

// latestTaskID is the id of flow flowID's newest task (ids sort by
// creation), or "" when it has none.
func latestTaskID(tx store.ReadTx, flowID string) (string, error) {
	id := ""
	err := tx.Scan(idxTaskFlow+flowID+"/", store.ScanOptions{Reverse: true, Limit: 1}, func(it store.Item) bool {
		id = lastSegment(it.Key)
		return false
	})
	return id, err
}

// mirrorOf returns a copy of mirrored flow f re-derived from its task.
func (t *txn) mirrorOf(f *sdk.Flow, task *stored.Task) *sdk.Flow {
	return mirrored(f, task, t.now)
}

// mirrored returns a copy of mirrored flow f re-derived from task at now:
// status, goal, the blocked fields (the task and the reason it reported,
// only while blocked, as in the reference) and the end time, which only
// a terminal flow has. A blocked task has ended, so cancelling its flow
// cannot stop it: the cancel request itself ends the flow, cancelled
// when it was made.
func mirrored(f *sdk.Flow, task *stored.Task, now time.Time) *sdk.Flow {
	next := cloneFlow(f)
	next.Status = mirrorStatus(task.Status)
	next.Goal = mirrorGoal(task)
	next.BlockedTaskID, next.BlockedSummary = "", ""
	next.EndedAt = time.Time{}
	switch {
	case next.Status == sdk.FlowBlocked && f.CancelRequested():
		next.Status, next.EndedAt = sdk.FlowCancelled, f.CancelRequestedAt
	case next.Status == sdk.FlowBlocked:
		next.BlockedTaskID, next.BlockedSummary = task.ID, task.Blocked
	case next.Status.Terminal():
		next.EndedAt = task.EndedAt
		if next.EndedAt.IsZero() {
			next.EndedAt = now
		}
	}
	return next
}

// mirrorChanged reports whether next differs from f in what a mirror
// derives (status, goal, blocked fields, end time).
func mirrorChanged(f, next *sdk.Flow) bool {
	return next.Status != f.Status || next.Goal != f.Goal || !next.EndedAt.Equal(f.EndedAt) ||
		next.BlockedTaskID != f.BlockedTaskID || next.BlockedSummary != f.BlockedSummary
}
