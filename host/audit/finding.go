package audit

import (
	"cmp"
	"slices"
	"time"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Kind says what a finding is about: a task or a flow.
type Kind string

// Finding kinds, as the reference names them.
const (
	KindTask Kind = "task"
	KindFlow Kind = "task_flow"
)

// Severity ranks a finding: errors need someone now, warnings soon.
type Severity string

// Severities, lowest first.
const (
	Warn  Severity = "warn"
	Error Severity = "error"
)

// severities is what Severities returns. Read-only.
var severities = [...]Severity{Warn, Error}

// Severities returns the severities, lowest first, in a new slice the
// caller may change.
func Severities() []Severity { return slices.Clone(severities[:]) }

// AtLeast reports whether s is as severe as min or more.
func (s Severity) AtLeast(min Severity) bool {
	return slices.Index(severities[:], s) >= slices.Index(severities[:], min)
}

// Code names what a finding found. See the package documentation for what
// each means, its severity and its threshold.
type Code string

// The reference's codes.
const (
	StaleQueued            Code = "stale_queued"
	StaleRunning           Code = "stale_running"
	Lost                   Code = "lost"
	DeliveryFailed         Code = "delivery_failed"
	MissingCleanup         Code = "missing_cleanup"
	InconsistentTimestamps Code = "inconsistent_timestamps"
	RestoreFailed          Code = "restore_failed"
	StaleWaiting           Code = "stale_waiting"
	StaleBlocked           Code = "stale_blocked"
	CancelStuck            Code = "cancel_stuck"
	MissingLinkedTasks     Code = "missing_linked_tasks"
	BlockedTaskMissing     Code = "blocked_task_missing"
)

// flowgate's own codes.
const (
	ControllerUnavailable Code = "controller_unavailable"
	EventsBacklog         Code = "events_backlog"
	OrphanProcess         Code = "orphan_process"
	DanglingTask          Code = "dangling_task"
	MirrorMismatch        Code = "mirror_mismatch"
	IndexMismatch         Code = "index_mismatch"
	NearSizeLimit         Code = "near_size_limit"
	// ContinuationNotStarted is a continuation accepted long ago that
	// still has not started: queued, without a task.
	ContinuationNotStarted Code = "continuation_not_started"
	// NotifyFailed is a notice to a destination given up after its retry
	// bound.
	NotifyFailed Code = "notify_failed"
	// JobFailing is a cron job whose runs keep failing; its token is the
	// job's id.
	JobFailing Code = "cron_job_failing"
)

// TaskCodes returns the codes a task finding can carry, in the order the
// summary lists them (the reference's first, then flowgate's own), in a
// new slice the caller may change.
func TaskCodes() []Code {
	return []Code{StaleQueued, StaleRunning, Lost, DeliveryFailed, MissingCleanup, InconsistentTimestamps,
		OrphanProcess, DanglingTask, IndexMismatch, NearSizeLimit}
}

// FlowCodes returns the codes a flow finding can carry, in summary order,
// in a new slice the caller may change.
func FlowCodes() []Code {
	return []Code{RestoreFailed, StaleRunning, StaleWaiting, StaleBlocked, CancelStuck, MissingLinkedTasks,
		BlockedTaskMissing, InconsistentTimestamps, ControllerUnavailable, EventsBacklog, MirrorMismatch, IndexMismatch, NearSizeLimit, ContinuationNotStarted, NotifyFailed, JobFailing}
}

// Codes lists every code once, task codes first.
func Codes() []Code {
	out := TaskCodes()
	for _, c := range FlowCodes() {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Finding is one problem the audit found. Token is the task or flow id
// (for an index entry, its record's id); Task or Flow is the record as
// read, absent when there is none (restore_failed, an index entry whose
// record is gone).
type Finding struct {
	Kind     Kind     `json:"kind"`
	Severity Severity `json:"severity"`
	Code     Code     `json:"code"`
	Detail   string   `json:"detail"`
	// AgeMS is how long the condition has held, in milliseconds, from the
	// code's reference time; nil when it has none.
	AgeMS  *int64       `json:"age_ms,omitempty"`
	Status string       `json:"status"`
	Token  string       `json:"token"`
	Task   *stored.Task `json:"task,omitempty"`
	Flow   *sdk.Flow    `json:"flow,omitempty"`
}

// createdAt is the record's creation time, the sort's last key.
func (f Finding) createdAt() time.Time {
	switch {
	case f.Task != nil:
		return f.Task.CreatedAt
	case f.Flow != nil:
		return f.Flow.CreatedAt
	}
	return time.Time{}
}

func (f Finding) age() int64 {
	if f.AgeMS == nil {
		return -1
	}
	return *f.AgeMS
}

// Sort orders findings as the reference does: errors first, then the
// larger age first (no age counts as -1), then the older record first;
// code and token break the remaining ties so the order is stable.
func Sort(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		if a.Severity != b.Severity {
			if a.Severity == Error {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(b.age(), a.age()); c != 0 {
			return c
		}
		if c := a.createdAt().Compare(b.createdAt()); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Code, b.Code), cmp.Compare(a.Token, b.Token))
	})
}

// ageSince is max(0, now-ref) in milliseconds.
func ageSince(now, ref time.Time) *int64 {
	ms := max(0, now.Sub(ref).Milliseconds())
	return &ms
}
