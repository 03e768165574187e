package stored

import "github.com/flowgate/flowgate/sdk"

// Task is a task record as the store keeps it: the public sdk.Task and the
// runner's bookkeeping. The JSON names are those these fields had on
// sdk.Task before they moved here, so stored records read the same.
//
// A field is here, not on sdk.Task, when a controller could not act on it:
// it names something only the gateway that runs the task can reach (a pid,
// a cluster member, a file offset) or it is the gateway's memory of what it
// already did. What a controller reasons about (status, attempts, times,
// result, errors, usage, a cancel request, when a queued retry starts)
// stays on sdk.Task.
type Task struct {
	sdk.Task

	// PID and PIDStartTime identify the task's process (the child); ShimPID
	// and ShimStartTime the shim that supervises it. A pid alone is never
	// trusted: the start time must match too. They are here because a pid
	// means something only on the gateway's machine, and only the runner
	// (reattach, cancel) and the audit (is it still alive) use them.
	PID          int    `json:"pid,omitempty"`
	PIDStartTime uint64 `json:"pid_start_time,omitempty"`
	// Gateway is the member id (host.pid) of the gateway that started the
	// task's latest attempt, when several gateways share an etcd
	// installation (docs/cluster.md); empty with one gateway. The runner
	// uses it to leave a task to the member that runs it, or take it over
	// when that member left, and the logs readers to find its files.
	Gateway       string `json:"gateway,omitempty"`
	ShimPID       int    `json:"shim_pid,omitempty"`
	ShimStartTime uint64 `json:"shim_start_time,omitempty"`
	// Boot is the boot of the machine (shim.BootID) whose gateway started
	// the latest attempt, when its shim claims it without syncing the
	// claim; empty when the claim is synced. A claim not synced is lost
	// if the machine restarts, so an attempt of another boot that shows
	// no claim may have run: the runner marks it lost instead of
	// queueing it again (the runner's package doc, "Never twice").
	Boot string `json:"boot,omitempty"`
	// InPlaceRetried says the task already had its one in-place retry of
	// this run, granted by a startup failure or a diagnosis: the runner's
	// memory that it must not grant a second one.
	InPlaceRetried bool `json:"in_place_retried,omitempty"`
	// MilestonesNoticed names the milestones of Spec.NotifyOnMilestone
	// whose message is queued. It makes that message once per run and
	// name: the queued message itself is gone once delivered.
	MilestonesNoticed []string `json:"milestones_noticed,omitempty"`
	// ProgressOffset is how far the progress file has been read; lines
	// before it are recorded. ProgressErrors counts malformed lines
	// skipped. Both are about the file the runner reads, which a
	// controller never sees.
	ProgressOffset int64 `json:"progress_offset,omitempty"`
	ProgressErrors int   `json:"progress_errors,omitempty"`
}

// Public is the task as a controller sees it: the sdk.Task alone, without
// the runner's fields. It is a copy that shares the record's slices and
// pointers, so read it, do not change it; nil for a nil task.
func (t *Task) Public() *sdk.Task {
	if t == nil {
		return nil
	}
	pub := t.Task
	return &pub
}

// Publics is Public for each task of a list, in order.
func Publics(tasks []*Task) []*sdk.Task {
	out := make([]*sdk.Task, len(tasks))
	for i, t := range tasks {
		out[i] = t.Public()
	}
	return out
}
