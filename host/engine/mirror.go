package engine

import (
	"cmp"

	"github.com/flowgate/flowgate/sdk"
)

// mirrorStatus derives a mirrored flow's status from its task.
func mirrorStatus(s sdk.TaskStatus) sdk.FlowStatus {
	switch s {
	case sdk.TaskRunning:
		return sdk.FlowRunning
	case sdk.TaskSucceeded:
		return sdk.FlowSucceeded
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
func mirrorGoal(task *sdk.Task) string {
	if g := task.Title(); g != "" {
		return g
	}
	return "Background task"
}

// createMirror stores the task_mirrored flow of a detached task.
func (e *Engine) createMirror(t *txn, task *sdk.Task) (*sdk.Flow, error) {
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
	return f, t.saveFlow(nil, f)
}

// syncMirror re-derives mirrored flow f from its task and saves it when
// anything changed, so identical syncs do not bump the revision.
func (t *txn) syncMirror(f *sdk.Flow, task *sdk.Task) error {
	next := t.mirrorOf(f, task)
	if !mirrorChanged(f, next) {
		return nil
	}
	return t.saveFlow(f, next)
}

// mirrorOf returns a copy of mirrored flow f re-derived from its task:
// status, goal and end time.
func (t *txn) mirrorOf(f *sdk.Flow, task *sdk.Task) *sdk.Flow {
	next := cloneFlow(f)
	next.Status = mirrorStatus(task.Status)
	next.Goal = mirrorGoal(task)
	next.EndedAt = task.EndedAt
	if next.Status.Terminal() && next.EndedAt.IsZero() {
		next.EndedAt = t.now
	}
	return next
}

// mirrorChanged reports whether next differs from f in what a mirror
// derives (status, goal, end time).
func mirrorChanged(f, next *sdk.Flow) bool {
	return next.Status != f.Status || next.Goal != f.Goal || !next.EndedAt.Equal(f.EndedAt)
}
