package audit

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// auditFlow reports the findings of flow f. Candidates found on the list
// snapshot are confirmed on one fresh snapshot of the flow and its tasks,
// so a flow that moved on while the audit ran is not reported.
func (a *auditor) auditFlow(f *sdk.Flow) error {
	if len(a.flowFindings(f, a.tasksByFlow[f.ID])) == 0 {
		return nil
	}
	v, err := a.eng.ViewFlow(f.ID)
	if err != nil || v.ID != f.ID {
		return nil // gone meanwhile; ViewFlow would fall back to an owner key
	}
	a.out = append(a.out, a.flowFindings(v.Flow, v.Tasks)...)
	return nil
}

// flowRef is the time a flow last changed, the reference's updatedAt.
func flowRef(f *sdk.Flow) time.Time {
	if f.UpdatedAt.IsZero() {
		return f.CreatedAt
	}
	return f.UpdatedAt
}

// flowFindings checks one flow with its linked tasks.
func (a *auditor) flowFindings(f *sdk.Flow, tasks []*stored.Task) []Finding {
	ref := flowRef(f)
	age := ageSince(a.now, ref)
	var out []Finding
	add := func(sev Severity, code Code, age *int64, detail string) {
		out = append(out, Finding{Kind: KindFlow, Severity: sev, Code: code, Detail: detail, AgeMS: age,
			Status: string(f.Status), Token: f.ID, Flow: f})
	}
	active := false
	for _, t := range tasks {
		active = active || t.Status.Active()
	}
	if stale, code, limit := a.staleness(f); stale >= limit && !active {
		switch {
		case f.SyncMode == sdk.SyncManaged && len(tasks) == 0 && !hasBlocker(f):
			// The more specific diagnosis replaces the stale_* finding.
			sev := Warn
			if f.Status == sdk.FlowRunning {
				sev = Error
			}
			add(sev, MissingLinkedTasks, age, "managed TaskFlow has no linked tasks or wait state")
		case code == StaleRunning:
			add(Error, code, age, "running TaskFlow has not advanced recently")
		default:
			add(Warn, code, age, fmt.Sprintf("%s TaskFlow has not advanced recently", f.Status))
		}
	}
	if f.CancelRequested() && !f.Status.Terminal() && !active && a.now.Sub(f.CancelRequestedAt) >= a.cfg.CancelStuck {
		add(Warn, CancelStuck, ageSince(a.now, f.CancelRequestedAt), "cancel-requested TaskFlow has no active child tasks but is still nonterminal")
	}
	if f.BlockedTaskID != "" && f.EndedAt.IsZero() && !hasTask(tasks, f.BlockedTaskID) {
		add(Warn, BlockedTaskMissing, age, "blocked TaskFlow points at missing task "+f.BlockedTaskID)
	}
	if d := flowTimestamps(f); d != "" {
		add(Warn, InconsistentTimestamps, age, d)
	}
	if d, since := a.controller(f); d != "" {
		if since.IsZero() {
			since = ref
		}
		add(Error, ControllerUnavailable, ageSince(a.now, since), d)
	}
	notStarted := f.Continuation != nil && f.Status == sdk.FlowQueued && len(tasks) == 0 && a.now.Sub(f.CreatedAt) >= a.cfg.ContinuationStart
	if notStarted {
		// The more specific diagnosis replaces events_backlog.
		add(Warn, ContinuationNotStarted, ageSince(a.now, f.CreatedAt), fmt.Sprintf("continuation of %s was accepted but has not started: no gateway has run its controller %s since", f.SourceFlowID, f.ControllerID))
	}
	if b, ok := a.oldest[f.ID]; ok && !notStarted && a.now.Sub(b.head.CreatedAt) >= a.cfg.EventsBacklog {
		add(Warn, EventsBacklog, ageSince(a.now, b.head.CreatedAt), b.detail())
	}
	if f.SyncMode == sdk.SyncTaskMirrored {
		if d := mirror(f, tasks); d != "" {
			add(Warn, MirrorMismatch, age, d)
		}
	}
	if d := nearLimit(f); d != "" {
		add(Warn, NearSizeLimit, nil, d)
	}
	return out
}

// staleness is how long f has not advanced in a status the reference
// checks, that status's code and its threshold. A flow waiting for a
// timer counts from the timer's time.
func (a *auditor) staleness(f *sdk.Flow) (time.Duration, Code, time.Duration) {
	idle := a.now.Sub(flowRef(f))
	switch f.Status {
	case sdk.FlowRunning:
		return idle, StaleRunning, a.cfg.FlowStaleRunning
	case sdk.FlowWaiting:
		var w sdk.Wait
		if json.Unmarshal(f.Wait, &w) == nil && w.Until.After(flowRef(f)) {
			idle = a.now.Sub(w.Until)
		}
		return idle, StaleWaiting, a.cfg.FlowStaleWaiting
	case sdk.FlowBlocked:
		if f.EndedAt.IsZero() {
			return idle, StaleBlocked, a.cfg.FlowStaleBlocked
		}
	}
	return 0, "", 1
}

// hasBlocker reports whether f records why it does not move: a blocking
// task or summary, or a wait.
func hasBlocker(f *sdk.Flow) bool {
	return f.BlockedTaskID != "" || f.BlockedSummary != "" || (len(f.Wait) > 0 && string(f.Wait) != "null")
}

func hasTask(tasks []*stored.Task, id string) bool {
	for _, t := range tasks {
		if t.ID == id {
			return true
		}
	}
	return false
}

// flowTimestamps returns what is wrong with f's timestamps (the first
// match, as in the reference), or "".
func flowTimestamps(f *sdk.Flow) string {
	switch {
	case !f.UpdatedAt.IsZero() && f.UpdatedAt.Before(f.CreatedAt):
		return "updated_at is earlier than created_at"
	case !f.EndedAt.IsZero() && f.EndedAt.Before(f.CreatedAt):
		return "ended_at is earlier than created_at"
	case !f.EndedAt.IsZero() && f.EndedAt.Before(f.UpdatedAt):
		return "ended_at is earlier than updated_at"
	}
	return ""
}

// controller says why the controller of non-terminal managed flow f
// cannot drive it, and since when, or returns "" when it can or when the
// plugins' state is unknown.
func (a *auditor) controller(f *sdk.Flow) (string, time.Time) {
	if !a.in.PluginsKnown || f.SyncMode != sdk.SyncManaged || f.Status.Terminal() {
		return "", time.Time{}
	}
	for _, p := range a.in.Plugins {
		if p.Name != f.ControllerID {
			continue
		}
		why := ""
		switch p.State {
		case pluginhost.StateRunning:
			return "", time.Time{}
		case pluginhost.StateStarting, pluginhost.StateBackoff:
			if a.now.Sub(p.Since) < a.cfg.ControllerGrace {
				return "", time.Time{}
			}
			why = fmt.Sprintf("has been %s since %s", p.State, p.Since.UTC().Format(time.RFC3339))
		default:
			why = "is " + string(p.State)
		}
		if p.LastError != "" {
			why += ": " + p.LastError
		}
		return fmt.Sprintf("controller plugin %q %s", f.ControllerID, why), p.Since
	}
	return fmt.Sprintf("no controller plugin %q is configured; add it to the gateway config's plugins", f.ControllerID), time.Time{}
}

// mirror says how task_mirrored flow f disagrees with its latest task
// (the earlier ones are runs a retry replaced), or returns "". The
// judgement is the engine's (engine.MirrorMismatch), the same maintenance
// repairs by.
func mirror(f *sdk.Flow, tasks []*stored.Task) string {
	if len(tasks) == 0 {
		return "mirrored TaskFlow has no task"
	}
	t := tasks[0]
	for _, c := range tasks[1:] {
		if c.ID > t.ID { // ids sort by creation
			t = c
		}
	}
	if !engine.MirrorMismatch(f, t) {
		return ""
	}
	if want := engine.MirrorStatus(t.Status); f.Status != want {
		return fmt.Sprintf("mirrored TaskFlow is %s but its task %s is %s (want %s)", f.Status, t.ID, t.Status, want)
	}
	return fmt.Sprintf("mirrored TaskFlow disagrees with its task %s on its goal, blocked fields or end time", t.ID)
}
