package apitype

import (
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

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

// CreateTaskInput describes a new task (RunTask).
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
	// with Spec.InheritEnv, the caller's environment. It is never stored:
	// the gateway's runner holds it in memory for the task's attempts.
	HeldEnv map[string]string
	// Budget is the soft usage budget of a detached task's chain (its
	// mirrored flow's); a task in a managed flow shares the flow's.
	Budget *sdk.Budget
	// DetachedBudget asks the gateway for its detached runs' max budget
	// (limits.detached_max_budget) when Spec.MaxBudget is zero.
	DetachedBudget bool
	// DetachedNoProgress asks the gateway for its detached runs'
	// no-progress budget (limits.detached_no_progress_budget) when
	// Spec.NoProgressBudget is zero.
	DetachedNoProgress bool
}

// Task is a task as the API answers with it: the public sdk.Task and the
// runner's bookkeeping (the pids `tasks show` and the audit print), as
// the store keeps it (stored.Task).
type Task = stored.Task

// Publics is the public part of each task of a list (stored.Publics).
func Publics(tasks []*Task) []*sdk.Task { return stored.Publics(tasks) }
