package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// The task reads: one task, lists and counts, and the runner's queue.

// GetTask returns the task with this id, or an ErrNotFound error.
func (e *Engine) GetTask(id string) (*stored.Task, error) {
	var task *stored.Task
	err := e.view(func(tx store.ReadTx) error {
		var err error
		task, err = loadTask(tx, id)
		return err
	})
	return task, err
}

// ResolveTask finds a task by id, else by idempotency key.
func (e *Engine) ResolveTask(token string) (*stored.Task, error) {
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, invalid("task id or idempotency key is empty")
	}
	var task *stored.Task
	err := e.view(func(tx store.ReadTx) error {
		var err error
		if task, err = loadTask(tx, token); !errors.Is(err, sdk.ErrNotFound) {
			return err
		}
		it, err := tx.Get(idemKey(token))
		if errors.Is(err, store.ErrKeyNotFound) {
			return fmt.Errorf("%w: no task has id or idempotency key %q; list tasks with flowgate tasks list", sdk.ErrNotFound, token)
		}
		if err != nil {
			return err
		}
		task, err = loadTask(tx, string(it.Value))
		return err
	})
	return task, err
}

// TaskFilter selects tasks for ListTasks. The zero value selects all.
type TaskFilter struct {
	Status   sdk.TaskStatus
	Runtime  string
	FlowID   string
	OwnerKey string
	// After is the cursor: list tasks older than this task id.
	After string
	// Limit caps the page; zero means no limit.
	Limit int
}

// TaskPage is one page of tasks, newest first, and the cursor of the next.
// Damaged lists the records the listing skipped because they cannot be
// read (see DamagedRecord).
type TaskPage struct {
	Tasks   []*stored.Task
	Next    string
	Damaged []DamagedRecord
}

// ListTasks returns tasks matching f, newest first.
func (e *Engine) ListTasks(f TaskFilter) (TaskPage, error) {
	if f.Status != "" {
		if _, err := sdk.ParseTaskStatus(string(f.Status)); err != nil {
			return TaskPage{}, err
		}
	}
	prefix := taskPrefix
	switch {
	case f.FlowID != "":
		prefix = idxTaskFlow + f.FlowID + "/"
	case f.Status != "":
		prefix = idxTaskStatus + string(f.Status) + "/"
	case f.OwnerKey != "":
		prefix = idxTaskOwner + esc(f.OwnerKey) + "/"
	}
	q := listQuery[stored.Task]{prefix: prefix, records: taskPrefix, after: f.After, limit: f.Limit,
		match: f.match, id: func(t *stored.Task) string { return t.ID }}
	var page TaskPage
	err := e.view(func(tx store.ReadTx) error {
		var err error
		page.Tasks, page.Next, page.Damaged, err = q.run(tx)
		return err
	})
	return page, err
}

func (f TaskFilter) match(t *stored.Task) bool {
	return (f.Status == "" || t.Status == f.Status) &&
		(f.Runtime == "" || t.Runtime == f.Runtime) &&
		(f.FlowID == "" || t.FlowID == f.FlowID) &&
		(f.OwnerKey == "" || t.OwnerKey == f.OwnerKey)
}

// FlowTasks returns the tasks linked to flow flowID, oldest first. Their
// records may be shared with the engine's other listings (see taskMemo):
// set a task's fields if need be, never change what they point to.
func (e *Engine) FlowTasks(flowID string) ([]*stored.Task, error) {
	var tasks []*stored.Task
	err := e.view(func(tx store.ReadTx) error {
		var err error
		tasks, err = firstFlowTasks(tx, flowID, 0, e.tasks)
		return err
	})
	return tasks, err
}

// flowTasks returns the tasks of flow flowID, oldest first. A damaged
// task fails it: a write must not act on a flow whose tasks it cannot see.
func flowTasks(tx store.ReadTx, flowID string) ([]*stored.Task, error) {
	return firstFlowTasks(tx, flowID, 0, nil)
}

// firstFlowTasks is flowTasks stopped at the limit oldest (0: all), its
// records read through memo (nil: each decoded).
func firstFlowTasks(tx store.ReadTx, flowID string, limit int, memo *taskMemo) ([]*stored.Task, error) {
	tasks, bad, err := flowTasksReadable(tx, flowID, limit, memo)
	if err == nil && len(bad) > 0 {
		err = &bad[0]
	}
	return tasks, err
}

// flowTasksReadable returns the tasks of flow flowID, oldest first, and
// the damaged task records it skipped, for listings; at most limit tasks
// (0: all). A read-only listing passes the engine's memo, a write nil.
func flowTasksReadable(tx store.ReadTx, flowID string, limit int, memo *taskMemo) (tasks []*stored.Task, bad []DamagedRecord, err error) {
	var loadErr error
	err = tx.Scan(idxTaskFlow+flowID+"/", store.ScanOptions{}, func(it store.Item) bool {
		task, err := memo.get(tx, taskPrefix+lastSegment(it.Key))
		ok := err == nil
		if errors.Is(err, store.ErrKeyNotFound) {
			err = nil
		}
		if d := damaged(err); d != nil {
			bad = append(bad, *d)
			return true
		}
		if loadErr = err; err != nil {
			return false
		}
		if ok {
			tasks = append(tasks, task)
		}
		return limit <= 0 || len(tasks) < limit
	})
	if err != nil {
		return nil, nil, err
	}
	return tasks, bad, loadErr
}

// CountTasks counts every task by status, from the status index.
func (e *Engine) CountTasks() (map[sdk.TaskStatus]int, error) {
	counts := map[sdk.TaskStatus]int{}
	err := e.view(func(tx store.ReadTx) error {
		for _, s := range sdk.TaskStatuses() {
			if err := tx.Scan(idxTaskStatus+string(s)+"/", store.ScanOptions{}, func(store.Item) bool {
				counts[s]++
				return true
			}); err != nil {
				return err
			}
		}
		return nil
	})
	return counts, err
}

// RunnableTasks returns up to limit queued tasks that have a command and
// whose retry time has come, oldest first (FIFO admission), and the
// earliest retry time among the waiting ones it passed (zero if none). One
// walk over the queue answers both, so a dispatcher needs no second scan.
// A task that asks for a label (TaskSpec.On) is left out unless labels
// holds it.
func (e *Engine) RunnableTasks(limit int, labels ...string) (tasks []*stored.Task, nextRetry time.Time, err error) {
	return e.RunnableTasksExcept(limit, nil, labels...)
}

// RunnableTasksExcept is RunnableTasks leaving out the tasks whose id
// skip reports (nil skips none) before it reads their records: a runner
// with tasks being launched, still queued until their start commits,
// asks past them without decoding each again at every hand-over.
func (e *Engine) RunnableTasksExcept(limit int, skip func(id string) bool, labels ...string) (tasks []*stored.Task, nextRetry time.Time, err error) {
	now := e.now()
	err = e.view(func(tx store.ReadTx) error {
		var loadErr error
		err := tx.Scan(idxTaskStatus+string(sdk.TaskQueued)+"/", store.ScanOptions{}, func(it store.Item) bool {
			if skip != nil && skip(lastSegment(it.Key)) {
				return true
			}
			// Kept: the start that follows reads the task it picks again.
			task, ok, err := indexed(tx, taskPrefix, it.Key, decodeRecord[stored.Task])
			if damaged(err) != nil {
				return true // never run; flowgate check and the audit report it
			}
			if loadErr = err; err != nil {
				return false
			}
			switch {
			case !ok, !Runnable(task), task.Spec.On != "" && !slices.Contains(labels, task.Spec.On):
			case task.RetryAt.After(now):
				if nextRetry.IsZero() || task.RetryAt.Before(nextRetry) {
					nextRetry = task.RetryAt
				}
			default:
				tasks = append(tasks, task)
			}
			return limit <= 0 || len(tasks) < limit
		})
		if err != nil {
			return err
		}
		return loadErr
	})
	return tasks, nextRetry, err
}
