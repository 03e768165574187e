package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// The timestamp repair puts back in order the timestamps the audit flags
// as inconsistent_timestamps (a clock that jumped, a record written on
// another gateway's clock, an old bug), each from the best evidence the
// record keeps:
//
//   - a queued or running task has not ended: its ended_at is cleared;
//   - a task cannot start before it was recorded: when started_at is
//     before created_at, created_at is lowered to started_at, since the
//     start came from the running process;
//   - a task cannot end before it started: ended_at becomes its last
//     write, updated_at, or started_at when that too is earlier;
//   - a flow cannot change or end before it was created: created_at is
//     lowered to the earliest of updated_at and ended_at;
//   - an ended flow is not changed after its end: updated_at is kept at
//     most ended_at, which stays as the end (a mirrored flow's is its
//     task's).
//
// Every rule moves a timestamp to one the record already holds, so a
// repaired record is consistent and a second repair finds nothing to do.

// RepairedTaskTimes returns task with its timestamps put in order and
// what changed, one "field old → new" each; none when they are in order.
func RepairedTaskTimes(task *stored.Task) (stored.Task, []string) {
	fixed := *task
	var changes []string
	set := func(name string, field *time.Time, v time.Time) {
		changes = append(changes, fmt.Sprintf("%s %s → %s", name, stampText(*field), stampText(v)))
		*field = v
	}
	if fixed.Status.Active() && !fixed.EndedAt.IsZero() {
		set("ended_at", &fixed.EndedAt, time.Time{})
	}
	if !fixed.StartedAt.IsZero() && fixed.StartedAt.Before(fixed.CreatedAt) {
		set("created_at", &fixed.CreatedAt, fixed.StartedAt)
	}
	if !fixed.EndedAt.IsZero() && !fixed.StartedAt.IsZero() && fixed.EndedAt.Before(fixed.StartedAt) {
		end := fixed.UpdatedAt
		if end.Before(fixed.StartedAt) {
			end = fixed.StartedAt
		}
		set("ended_at", &fixed.EndedAt, end)
	}
	return fixed, changes
}

// RepairedFlowTimes is RepairedTaskTimes for a flow.
func RepairedFlowTimes(f *sdk.Flow) (sdk.Flow, []string) {
	fixed := *f
	var changes []string
	set := func(name string, field *time.Time, v time.Time) {
		changes = append(changes, fmt.Sprintf("%s %s → %s", name, stampText(*field), stampText(v)))
		*field = v
	}
	if !fixed.UpdatedAt.IsZero() && fixed.UpdatedAt.Before(fixed.CreatedAt) {
		set("created_at", &fixed.CreatedAt, fixed.UpdatedAt)
	}
	if !fixed.EndedAt.IsZero() && fixed.EndedAt.Before(fixed.CreatedAt) {
		set("created_at", &fixed.CreatedAt, fixed.EndedAt)
	}
	if !fixed.EndedAt.IsZero() && fixed.EndedAt.Before(fixed.UpdatedAt) {
		set("updated_at", &fixed.UpdatedAt, fixed.EndedAt)
	}
	return fixed, changes
}

// stampText renders a timestamp for a history entry; "none" for zero.
func stampText(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// RepairTaskTimestamps repairs the timestamps of task id (see
// RepairedTaskTimes) and, for a mirrored flow, its flow's end with it,
// recording each in the flow's history. seen is the task's updated_at as
// the caller read it, which every write of a task moves: a task written
// since is refused with sdk.ErrRevisionConflict, and one with nothing to
// repair with sdk.ErrInvalid, changing nothing.
func (e *Engine) RepairTaskTimestamps(id string, seen time.Time) (*stored.Task, error) {
	var out *stored.Task
	err := e.write(func(t *txn) error {
		old, err := loadTask(t.tx, id)
		if err != nil {
			return err
		}
		if !old.UpdatedAt.Equal(seen) {
			return fmt.Errorf("%w: task %s was written at %s, after it was read; read it again", sdk.ErrRevisionConflict, id, stampText(old.UpdatedAt))
		}
		fixed, changes := RepairedTaskTimes(old)
		if len(changes) == 0 {
			return fmt.Errorf("%w: task %s has no inconsistent timestamps to repair", sdk.ErrInvalid, id)
		}
		t.repairNote = "timestamps repaired: " + strings.Join(changes, ", ")
		if err := t.saveTask(old, &fixed); err != nil {
			return err
		}
		out = &fixed
		f, err := loadFlow(t.tx, fixed.FlowID)
		if err != nil || !MirrorMismatch(f, &fixed) {
			return nil // a dangling task has no flow to follow it
		}
		return t.saveRepairedFlow(f, t.mirrorOf(f, &fixed), "its task's "+t.repairNote)
	})
	return out, err
}

// RepairFlowTimestamps repairs the timestamps of flow id (see
// RepairedFlowTimes), guarded by the revision the caller read: a stale
// one is refused with *sdk.RevisionConflictError, and a flow with nothing
// to repair with sdk.ErrInvalid, changing nothing.
func (e *Engine) RepairFlowTimestamps(id string, expected int64) (*sdk.Flow, error) {
	var out *sdk.Flow
	err := e.write(func(t *txn) error {
		f, err := loadFlow(t.tx, id)
		if err != nil {
			return err
		}
		if f.Revision != expected {
			return &sdk.RevisionConflictError{Expected: expected, Current: f}
		}
		if _, changes := RepairedFlowTimes(f); len(changes) == 0 {
			return fmt.Errorf("%w: flow %s has no inconsistent timestamps to repair", sdk.ErrInvalid, id)
		}
		next := cloneFlow(f)
		if err := t.saveRepairedFlow(f, next, "timestamps repaired"); err != nil {
			return err
		}
		out = next
		return nil
	})
	return out, err
}

// saveRepairedFlow writes next over old with its timestamps in order. An
// ended flow keeps updated_at at most its end rather than taking now,
// which would put it after the end again; the history entry says what
// moved.
func (t *txn) saveRepairedFlow(old, next *sdk.Flow, why string) error {
	next.UpdatedAt = old.UpdatedAt
	fixed, changes := RepairedFlowTimes(next)
	*next = fixed
	if !next.EndedAt.IsZero() {
		t.stampAt = next.UpdatedAt
	}
	summary := why
	if len(changes) > 0 {
		summary += "; " + strings.Join(changes, ", ")
	}
	t.explain(next.ID, historyNote{Kind: HistoryRevision, Summary: summary, By: "maintenance"})
	return t.saveFlow(old, next)
}
