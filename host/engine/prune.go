package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// The maintenance primitives. Each one re-reads its record in its own
// transaction and refuses (with sdk.ErrInvalid, changing nothing) when the
// record no longer qualifies, so a maintenance pass planned from a listing
// can never act on a record that moved meanwhile.

// PruneFlow deletes terminal flow id and everything that belongs to it: its
// tasks, their index and idempotency entries, and its event outbox. It
// refuses a flow that is not terminal (a flow waiting at a gate or blocked
// can still move), that ended after cutoff, that has a task still
// active, or whose continuation has not ended before cutoff too (it
// reuses the source's results). It returns the ids of the tasks deleted,
// so the caller can remove their logs, also when it fails part way.
//
// A flow is pruned in one transaction when the store takes it. One with
// more tasks than a backend takes in one transaction (etcd: 128
// operations, about 25 tasks) is pruned in steps: its tasks pruneStep at
// a time, each step a transaction of its own that checks again that the
// flow may go, then the flow with what is left. A crash between steps
// leaves a terminal flow with fewer tasks and every index in step; the
// next prune finishes it.
func (e *Engine) PruneFlow(id string, cutoff time.Time) ([]string, error) {
	pruned, err := e.pruneFlow(id, cutoff)
	if !errors.Is(err, store.ErrTxnTooLarge) {
		return pruned, err
	}
	if err := e.view(func(tx store.ReadTx) error { return prunable(tx, id, cutoff) }); err != nil {
		return nil, err
	}
	var done []string
	for {
		ids, err := e.pruneFlowTasks(id, cutoff, pruneStep)
		done = append(done, ids...)
		if err != nil {
			return done, err
		}
		if len(ids) < pruneStep {
			break
		}
	}
	pruned, err = e.pruneFlow(id, cutoff)
	return append(done, pruned...), err
}

// pruneStep is how many tasks one step of a prune in steps deletes: each
// is about five writes and two reads, well within etcd's 128 operations.
const pruneStep = 16

// pruneFlow prunes flow id in one transaction (see PruneFlow).
func (e *Engine) pruneFlow(id string, cutoff time.Time) ([]string, error) {
	var pruned []string
	err := e.write(func(t *txn) error {
		pruned = nil
		f, err := prunableFlow(t.tx, id, cutoff)
		if err != nil {
			return err
		}
		tasks, err := flowTasks(t.tx, id)
		if err != nil {
			return err
		}
		if pruned, err = t.deleteEnded(id, tasks); err != nil {
			return err
		}
		// The outbox with its queue entry, the values the flow kept,
		// the notices given up on, and any task index entries left
		// without their task (a stray
		// entry would outlive the flow it names). On etcd each prefix is
		// one range delete, however many keys it holds.
		if err := t.dropDue(id); err != nil {
			return err
		}
		for _, prefix := range []string{eventPrefix + id + "/", idxTaskFlow + id + "/", keptPrefix + id + "/", noticeFailedPrefix + id + "/"} {
			if err := t.deletePrefix(prefix); err != nil {
				return err
			}
		}
		if err := t.del(seqPrefix + id); err != nil {
			return err
		}
		if err := t.del(streamKey(id)); err != nil {
			return err
		}
		if err := t.pruneWakes(id); err != nil {
			return err
		}
		if err := t.pruneHistory(id); err != nil {
			return err
		}
		if err := t.reindex(flowIndexKeys(f), nil); err != nil {
			return err
		}
		if f.IdempotencyKey != "" {
			if err := t.del(flowIdemKey(f.ControllerID, f.IdempotencyKey)); err != nil {
				return err
			}
		}
		if err := t.del(flowKey(id)); err != nil {
			return err
		}
		return t.pruneChain(f.Chain())
	})
	return pruned, err
}

// pruneFlowTasks is one step of a prune in steps: it deletes up to n of
// flow id's tasks, the oldest first, once prunable says the flow may go
// (the flow itself stays), and returns their ids.
func (e *Engine) pruneFlowTasks(id string, cutoff time.Time, n int) ([]string, error) {
	var pruned []string
	err := e.write(func(t *txn) error {
		pruned = nil
		if _, err := prunableFlow(t.tx, id, cutoff); err != nil {
			return err
		}
		tasks, err := firstFlowTasks(t.tx, id, n, nil)
		if err != nil {
			return err
		}
		pruned, err = t.deleteEnded(id, tasks)
		return err
	})
	return pruned, err
}

// prunable refuses (with sdk.ErrInvalid) to prune flow id unless the flow
// and every task of it are terminal, it ended by cutoff, and its
// continuation is done (see PruneFlow).
func prunable(tx store.ReadTx, id string, cutoff time.Time) error {
	if _, err := prunableFlow(tx, id, cutoff); err != nil {
		return err
	}
	tasks, err := flowTasks(tx, id)
	if err != nil {
		return err
	}
	return allTerminal(id, tasks)
}

// prunableFlow is prunable without the look at the flow's tasks; it
// returns the flow.
func prunableFlow(tx store.ReadTx, id string, cutoff time.Time) (*sdk.Flow, error) {
	f, err := loadFlow(tx, id)
	if err != nil {
		return nil, err
	}
	switch {
	case !f.Status.Terminal():
		return nil, fmt.Errorf("%w: flow %s is %s and can still move; only terminal flows are pruned", sdk.ErrInvalid, id, f.Status)
	case f.EndedAt.After(cutoff):
		return nil, fmt.Errorf("%w: flow %s ended at %s, inside the retention", sdk.ErrInvalid, id, f.EndedAt.Format(time.RFC3339))
	}
	return f, continuationDone(tx, f, cutoff)
}

// allTerminal refuses to prune flow id while one of tasks is not terminal.
func allTerminal(id string, tasks []*stored.Task) error {
	for _, task := range tasks {
		if !task.Status.Terminal() {
			return fmt.Errorf("%w: flow %s has task %s still %s", sdk.ErrInvalid, id, task.ID, task.Status)
		}
	}
	return nil
}

// continuationDone refuses to prune f while its continuation may still
// read what f left: the results a continuation reuses point at f's task
// logs. f goes once its continuation has ended before cutoff too.
func continuationDone(tx store.ReadTx, f *sdk.Flow, cutoff time.Time) error {
	ch, err := loadChain(tx, f.Chain())
	if err != nil || ch.Continuation == "" || ch.Continuation == f.ID {
		return err
	}
	succ, err := loadFlow(tx, ch.Continuation)
	switch {
	case errors.Is(err, sdk.ErrNotFound):
		return nil // pruned already
	case err != nil:
		return err
	case !succ.Status.Terminal() || succ.EndedAt.After(cutoff):
		return fmt.Errorf("%w: flow %s is the source of continuation %s, which still reuses its results; it is pruned with it", sdk.ErrInvalid, f.ID, succ.ID)
	}
	return nil
}

// PruneTask deletes terminal task id whose flow no longer exists (a
// dangling task) once its CleanupAfter has passed at now. Tasks with a
// flow go with their flow (PruneFlow), so a controller never sees the
// tasks of a live flow disappear.
func (e *Engine) PruneTask(id string, now time.Time) error {
	return e.write(func(t *txn) error {
		task, err := loadTask(t.tx, id)
		if err != nil {
			return err
		}
		switch {
		case !task.Status.Terminal():
			return fmt.Errorf("%w: task %s is %s; only terminal tasks are pruned", sdk.ErrInvalid, id, task.Status)
		case task.CleanupAfter.IsZero() || task.CleanupAfter.After(now):
			return fmt.Errorf("%w: task %s is kept until %s", sdk.ErrInvalid, id, task.CleanupAfter.Format(time.RFC3339))
		}
		if _, err := t.tx.Get(flowKey(task.FlowID)); err == nil {
			return fmt.Errorf("%w: task %s belongs to flow %s and is pruned with it", sdk.ErrInvalid, id, task.FlowID)
		}
		return t.deleteTask(task)
	})
}

// StampCleanup gives terminal task id a CleanupAfter when it has none: its
// end (or, lacking one, its last update) plus the task retention.
func (e *Engine) StampCleanup(id string) (*stored.Task, error) {
	var out *stored.Task
	err := e.write(func(t *txn) error {
		old, err := loadTask(t.tx, id)
		if err != nil {
			return err
		}
		if !old.Status.Terminal() || !old.CleanupAfter.IsZero() {
			return fmt.Errorf("%w: task %s is %s with cleanup_after %v; nothing to stamp", sdk.ErrInvalid, id, old.Status, old.CleanupAfter)
		}
		task := *old
		base := task.EndedAt
		if base.IsZero() {
			base = task.UpdatedAt
		}
		task.CleanupAfter = base.Add(t.retention)
		if err := t.saveTask(old, &task); err != nil {
			return err
		}
		out = &task
		return nil
	})
	return out, err
}

// FinalizeCancel makes managed flow id cancelled when it has a cancel
// request, is not terminal, and no task of it is active: the state a cancel
// reaches by itself when its last task settles, for a flow that missed it.
func (e *Engine) FinalizeCancel(id string) (*sdk.Flow, error) {
	var out *sdk.Flow
	err := e.write(func(t *txn) error {
		f, err := loadFlow(t.tx, id)
		if err != nil {
			return err
		}
		if f.SyncMode != sdk.SyncManaged || !f.CancelRequested() || f.Status.Terminal() {
			return fmt.Errorf("%w: flow %s (%s, %s) has no cancel to finish", sdk.ErrInvalid, id, f.SyncMode, f.Status)
		}
		tasks, err := flowTasks(t.tx, id)
		if err != nil {
			return err
		}
		for _, task := range tasks {
			if task.Status.Active() {
				return fmt.Errorf("%w: flow %s still has task %s %s", sdk.ErrInvalid, id, task.ID, task.Status)
			}
		}
		if err := t.finishCancel(f); err != nil {
			return err
		}
		out, err = loadFlow(t.tx, id)
		return err
	})
	return out, err
}

// MirrorStatus is the status a mirrored flow takes from its task's.
func MirrorStatus(s sdk.TaskStatus) sdk.FlowStatus { return mirrorStatus(s) }

// MirrorMismatch reports whether mirrored flow f disagrees with task, its
// latest (status, goal, blocked fields or end time), as the audit and
// RepairMirror judge it. A terminal task with no end time is taken to end
// when the flow does.
func MirrorMismatch(f *sdk.Flow, task *stored.Task) bool {
	return f.SyncMode == sdk.SyncTaskMirrored && mirrorChanged(f, mirrored(f, task, f.EndedAt))
}

// RepairMirror re-derives mirrored flow id from its latest task. It
// refuses a flow that is not mirrored or that has no task.
func (e *Engine) RepairMirror(id string) (*sdk.Flow, error) {
	var out *sdk.Flow
	err := e.write(func(t *txn) error {
		f, err := loadFlow(t.tx, id)
		if err != nil {
			return err
		}
		if f.SyncMode != sdk.SyncTaskMirrored {
			return fmt.Errorf("%w: flow %s is %s, not mirrored", sdk.ErrInvalid, id, f.SyncMode)
		}
		tasks, err := flowTasks(t.tx, id)
		if err != nil {
			return err
		}
		if len(tasks) == 0 {
			return fmt.Errorf("%w: mirrored flow %s has no task to derive it from", sdk.ErrInvalid, id)
		}
		if err := t.syncMirror(f, tasks[len(tasks)-1]); err != nil {
			return err
		}
		out, err = loadFlow(t.tx, id)
		return err
	})
	return out, err
}

// deleteTask removes a task record with its index and idempotency entries.
func (t *txn) deleteTask(task *stored.Task) error {
	if err := t.reindex(taskIndexKeys(task), nil); err != nil {
		return err
	}
	if task.IdempotencyKey != "" {
		if it, err := t.tx.Get(idemKey(task.IdempotencyKey)); err == nil && string(it.Value) == task.ID {
			if err := t.del(idemKey(task.IdempotencyKey)); err != nil {
				return err
			}
		}
	}
	return t.del(taskKey(task.ID))
}

// deletePrefix removes every key under prefix.
func (t *txn) deletePrefix(prefix string) error {
	var keys []string
	if err := t.tx.Scan(prefix, store.ScanOptions{}, func(it store.Item) bool {
		keys = append(keys, it.Key)
		return true
	}); err != nil {
		return err
	}
	for _, k := range keys {
		if err := t.del(k); err != nil {
			return err
		}
	}
	return nil
}

// FlowsEndedBefore returns the ids of up to limit flows that ended at or
// before cutoff, oldest first, from the end-time index: the candidates for
// pruning, found without reading the flows that are not. Zero limit means
// no limit.
func (e *Engine) FlowsEndedBefore(cutoff time.Time, limit int) ([]string, error) {
	var ids []string
	end := idxFlowEnded + timeKey(cutoff) + "/~"
	err := e.view(func(tx store.ReadTx) error {
		ids = nil
		return tx.Scan(idxFlowEnded, store.ScanOptions{}, func(it store.Item) bool {
			if it.Key > end || (limit > 0 && len(ids) >= limit) {
				return false
			}
			ids = append(ids, lastSegment(it.Key))
			return true
		})
	})
	return ids, err
}

// deleteEnded deletes tasks of flow id, once every one of them has
// ended, and returns their ids.
func (t *txn) deleteEnded(id string, tasks []*stored.Task) ([]string, error) {
	if err := allTerminal(id, tasks); err != nil {
		return nil, err
	}
	var ids []string
	for _, task := range tasks {
		if err := t.deleteTask(task); err != nil {
			return nil, err
		}
		ids = append(ids, task.ID)
	}
	return ids, nil
}
