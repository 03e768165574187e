package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// flowHistory appends the entry for the write of flow f over old (nil for
// a new flow): one entry per write, its kind read from the change unless
// the write explained itself (explain).
func (t *txn) flowHistory(old, f *sdk.Flow) error {
	data := map[string]any{"revision": f.Revision, "status": f.Status}
	e := HistoryEntry{}
	note, noted := t.notes[f.ID]
	delete(t.notes, f.ID)
	switch {
	case old == nil && f.SourceFlowID != "":
		e.Kind, e.Summary = HistoryContinuation, "created as the continuation of flow "+f.SourceFlowID
		data["source_flow_id"] = f.SourceFlowID
	case old == nil:
		e.Kind, e.Summary = HistoryFlowCreated, fmt.Sprintf("created %s %s: %s", f.Status, f.SyncMode, oneLine(f.Goal))
		if f.ControllerID != "" {
			data["controller_id"] = f.ControllerID
		}
	case noted && note.Kind != "":
		e.Kind, e.Summary = note.Kind, note.Summary
	case !old.CancelRequested() && f.CancelRequested():
		e.Kind, e.Summary = HistoryCancelRequested, "cancel requested"
	case f.Status == sdk.FlowWaiting && (old.Status != f.Status || !bytes.Equal(old.Wait, f.Wait)) && isGate(f.Wait):
		g, _ := sdk.ParseGate(f.Wait)
		e.Kind, e.Summary = HistoryGateOpened, fmt.Sprintf("waits at %s gate %s: %s", g.Kind, g.Step, oneLine(g.Prompt))
		data["gate"] = g
	case old.Status != f.Status:
		e.Kind, e.Summary = HistoryStatus, string(old.Status)+" → "+string(f.Status)
	default:
		e.Kind, e.Summary = HistoryRevision, "revision "+fmt.Sprint(f.Revision)+": "+strings.Join(flowFields(old, f), ", ")+" changed"
		data["fields"] = flowFields(old, f)
	}
	if old != nil {
		data["from"] = old.Status
		if old.Status != f.Status && e.Kind != HistoryStatus {
			e.Summary += " (" + string(old.Status) + " → " + string(f.Status) + ")"
		}
	}
	if f.Status == sdk.FlowBlocked && f.BlockedSummary != "" && (old == nil || old.BlockedSummary != f.BlockedSummary) {
		e.Summary += ": " + oneLine(f.BlockedSummary)
	}
	if noted {
		e.By = note.By
		for k, v := range note.Data {
			data[k] = v
		}
	}
	return t.recordData(f.ID, e, data)
}

// isGate reports whether a wait is a gate (approval or input).
func isGate(wait json.RawMessage) bool {
	_, ok := sdk.ParseGate(wait)
	return ok
}

// flowFields names the fields a flow write changed besides its status.
func flowFields(old, f *sdk.Flow) []string {
	var out []string
	add := func(name string, changed bool) {
		if changed {
			out = append(out, name)
		}
	}
	add("goal", old.Goal != f.Goal)
	add("current_step", old.CurrentStep != f.CurrentStep)
	add("state", !bytes.Equal(old.State, f.State))
	add("wait", !bytes.Equal(old.Wait, f.Wait))
	add("blocked", old.BlockedTaskID != f.BlockedTaskID || old.BlockedSummary != f.BlockedSummary)
	add("notify_policy", old.NotifyPolicy != f.NotifyPolicy)
	if len(out) == 0 {
		out = []string{"nothing"}
	}
	return out
}

// taskHistory appends the entries for the write of task over old (nil for
// a new task): its lifecycle move, its wake banner, diagnosis, each new
// milestone and its progress, or one bookkeeping entry when the write was none of these.
// A task whose flow is gone (a dangling task) has no history to add to.
func (t *txn) taskHistory(old, task *stored.Task) error {
	if _, err := t.tx.Get(flowKey(task.FlowID)); errors.Is(err, store.ErrKeyNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	type change struct {
		e    HistoryEntry
		data map[string]any
	}
	var entries []change
	add := func(kind HistoryKind, summary string, data map[string]any) {
		entries = append(entries, change{HistoryEntry{Kind: kind, Summary: summary, TaskID: task.ID}, data})
	}
	name := task.Label
	if name == "" {
		name = task.ID
	}
	name = "task " + oneLine(name)
	if queued := t.createdQueued[task.ID]; old == nil && queued != nil {
		// Started by the write that created it: its history tells the
		// creation and the start, as two writes would have.
		kind, summary, _ := taskMove(nil, queued)
		add(kind, name+" "+summary, map[string]any{"status": queued.Status, "attempt": queued.Attempts,
			"exit_code": queued.ExitCode, "reason": queued.Reason, "class": queued.Class})
		old = queued
	}
	if kind, summary, ok := taskMove(old, task); ok {
		data := map[string]any{"status": task.Status, "attempt": task.Attempts,
			"exit_code": task.ExitCode, "reason": task.Reason, "class": task.Class}
		if kind == HistoryTaskCorrected {
			data["corrected_from"] = old.Status
		}
		add(kind, name+" "+summary, data)
	}
	if old != nil && !old.CancelRequested() && task.CancelRequested() && !task.Status.Terminal() {
		add(HistoryTaskCancelRequested, name+" asked to stop", nil)
	}
	if s := task.Session; s != nil && s.Banner != "" && (old == nil || old.Session == nil || old.Session.Banner != s.Banner) {
		add(HistoryWake, s.Banner, map[string]any{"session": s})
	}
	if d := task.Diagnosis; d != nil && (old == nil || !sameJSON(old.Diagnosis, d)) {
		add(HistoryDiagnosis, fmt.Sprintf("%s attempt %d diagnosis %s %s", name, d.Attempt, d.State, d.Recommendation), map[string]any{"diagnosis": d})
	}
	var last int64
	if old != nil && len(old.Milestones) > 0 {
		last = old.Milestones[len(old.Milestones)-1].Seq
	}
	for _, m := range task.Milestones {
		if m.Seq > last {
			add(HistoryMilestone, fmt.Sprintf("%s milestone %s %s", name, oneLine(m.Name), oneLine(m.Message)), map[string]any{"milestone": m})
		}
	}
	if p := task.Progress; p != nil && (old == nil || !sameJSON(old.Progress, p)) {
		add(HistoryProgress, name+" "+progressLine(p), map[string]any{"progress": p})
	}
	if len(entries) == 0 {
		what := taskBookkeeping(old, task)
		if t.repairNote != "" {
			what = t.repairNote
		}
		add(HistoryTaskUpdated, name+" "+what, nil)
	}
	for _, c := range entries {
		if err := t.recordData(task.FlowID, c.e, c.data); err != nil {
			return err
		}
	}
	return nil
}

// taskMove names a task's lifecycle change, if the write was one.
func taskMove(old, task *stored.Task) (HistoryKind, string, bool) {
	switch {
	case old == nil:
		return HistoryTaskCreated, "created " + string(task.Status) + " (" + task.Runtime + ")", true
	case old.Status == task.Status:
		return "", "", false
	case corrected(old, task):
		// The correction's evidence is the error it appended.
		return HistoryTaskCorrected, task.Errors[len(task.Errors)-1], true
	case task.Status == sdk.TaskRunning:
		return HistoryTaskStarted, fmt.Sprintf("started attempt %d", task.Attempts), true
	case task.Status == sdk.TaskQueued:
		return HistoryTaskRetried, fmt.Sprintf("attempt %d failed; queued for a retry", task.Attempts), true
	case task.Status == sdk.TaskLost:
		return HistoryTaskLost, "lost", true
	}
	s := string(task.Status)
	if task.ExitCode != nil {
		s += fmt.Sprintf(" (exit %d)", *task.ExitCode)
	}
	if task.Reason != "" {
		s += ": " + task.Reason
	}
	return HistoryTaskFinished, s, true
}

// taskBookkeeping says what a write that moved nothing recorded.
func taskBookkeeping(old, task *stored.Task) string {
	switch {
	case (old.PID != task.PID || old.ShimPID != task.ShimPID) && task.PID == 0:
		return fmt.Sprintf("shim pid %d started; its child has not started yet", task.ShimPID)
	case old.PID != task.PID || old.ShimPID != task.ShimPID:
		return fmt.Sprintf("runs as pid %d under shim pid %d", task.PID, task.ShimPID)
	case !old.CleanupAfter.Equal(task.CleanupAfter):
		return "kept until " + task.CleanupAfter.Format(time.RFC3339)
	case old.ProgressErrors != task.ProgressErrors:
		return fmt.Sprintf("skipped %d malformed progress lines", task.ProgressErrors-old.ProgressErrors)
	}
	return "updated"
}

// progressLine renders a progress snapshot in one line.
func progressLine(p *sdk.Progress) string {
	s := "progress"
	if p.Fraction != nil {
		s += fmt.Sprintf(" %.0f%%", *p.Fraction*100)
	}
	if p.Phase != "" {
		s += " " + oneLine(p.Phase)
	}
	if p.Message != "" {
		s += ": " + oneLine(p.Message)
	}
	return s
}

// recordData appends e with data, if any, as its details.
func (t *txn) recordData(flowID string, e HistoryEntry, data map[string]any) error {
	if len(data) == 0 {
		return t.record(flowID, e)
	}
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode the history entry of flow %s: %w", flowID, err)
	}
	e.Data = b
	return t.record(flowID, e)
}

// sameJSON reports whether a and b encode alike.
func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// oneLine shortens s to one line of at most 120 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:119]) + "…"
	}
	return s
}
