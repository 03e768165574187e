package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// ErrStaleProgress is returned by RecordProgress when the task's progress
// offset moved since the caller read it: those lines are already recorded.
var ErrStaleProgress = errors.New("progress already recorded past this offset")

// ProgressInput is what the runner read from a task's progress file
// between two offsets.
type ProgressInput struct {
	// From must equal the task's stored ProgressOffset; To is the offset
	// after the last complete line read.
	From, To int64
	// Progress is the latest snapshot read, or nil when none was.
	Progress *sdk.Progress
	// Milestones are the milestones read, in file order; the engine
	// numbers them.
	Milestones []sdk.Milestone
	// Malformed counts lines that were skipped.
	Malformed int
	// Usage sums the usage lines read; nil when there were none.
	Usage *sdk.Usage
	// Blocked is the reason of the last {"blocked":…} line read; empty
	// when none was. The task keeps it, and ends blocked if it exits 0.
	Blocked string
	// Session is the agent session a line reported; nil when none did.
	// The runner stops reading at such a line, so the id is recorded in
	// a write of its own before any later line is acted on.
	Session *SessionReport
}

// SessionReport is a progress line's {"session_id":…,"context_tokens":…}.
type SessionReport struct {
	// ID is the agent's session id; empty when the line gave only a
	// context size.
	ID string
	// ContextTokens is the agent's context size; zero when not given.
	ContextTokens int64
}

// RecordProgress stores what the runner read from the progress file of
// task id, in one transaction with the new offset, so that after a crash
// reading resumes exactly where it stopped: no milestone is lost or stored
// twice. Each milestone gets the task's next sequence number and queues a
// task.milestone event for a managed flow. A reported session is written
// on the task and in its lineage step in the same transaction.
func (e *Engine) RecordProgress(id string, in ProgressInput) (*stored.Task, error) {
	if in.To < in.From {
		return nil, invalid("progress offsets go backwards (%d to %d)", in.From, in.To)
	}
	var out *stored.Task
	err := e.write(func(t *txn) error {
		old, err := loadTask(t.tx, id)
		if err != nil {
			return err
		}
		if old.Status.Terminal() {
			return fmt.Errorf("%w: task %s is already %s", sdk.ErrTerminal, id, old.Status)
		}
		if old.ProgressOffset != in.From {
			return fmt.Errorf("%w: task %s is at offset %d, not %d", ErrStaleProgress, id, old.ProgressOffset, in.From)
		}
		task := *old
		task.Milestones = append([]sdk.Milestone(nil), old.Milestones...)
		task.ProgressOffset = in.To
		task.ProgressErrors += in.Malformed
		if r := blockedReason(in.Blocked); r != "" {
			task.Blocked = r
		}
		if in.Progress != nil {
			p := *in.Progress
			if p.At.IsZero() {
				p.At = t.now
			}
			task.Progress = &p
		}
		f, err := loadFlow(t.tx, task.FlowID)
		if err != nil {
			return err
		}
		for _, m := range in.Milestones {
			m.Name = strings.TrimSpace(m.Name)
			m.Seq = nextSeq(&task)
			if m.At.IsZero() {
				m.At = t.now
			}
			task.Milestones = append(task.Milestones, m)
			data, err := json.Marshal(m)
			if err != nil {
				return err
			}
			if err := t.appendEvent(f, sdk.EventTaskMilestone, id, data); err != nil {
				return err
			}
			if err := t.queueMilestoneNotices(f, &task, m); err != nil {
				return err
			}
		}
		if in.Usage != nil {
			task.Usage = task.Usage.Add(in.Usage)
			if err := t.addChainUsage(f, in.Usage); err != nil {
				return err
			}
		}
		if in.Session != nil {
			if err := t.recordSession(&task, in.Session); err != nil {
				return err
			}
		}
		if err := t.saveTask(old, &task); err != nil {
			return err
		}
		out = &task
		return nil
	})
	return out, err
}

// nextSeq is the sequence number of task's next milestone: one past the
// latest, which is always kept, or past those dropped when none is.
func nextSeq(task *stored.Task) int64 {
	if n := len(task.Milestones); n > 0 {
		return task.Milestones[n-1].Seq + 1
	}
	return task.MilestonesDropped + 1
}
