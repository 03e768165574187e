package audit

import (
	"errors"
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// auditTask reports the findings of task t. Candidates found on the list
// snapshot are confirmed on the task as it is now, so a task that moved
// on while the audit ran is not reported.
func (a *auditor) auditTask(t *stored.Task) error {
	if len(a.taskFindings(t, a.flowExists(t.FlowID))) == 0 {
		return nil
	}
	cur, err := a.eng.GetTask(t.ID)
	if errors.Is(err, sdk.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	exists := true
	var damaged *engine.DamagedRecord
	switch _, err := a.eng.GetFlow(cur.FlowID); {
	case errors.Is(err, sdk.ErrNotFound):
		exists = false
	case errors.As(err, &damaged):
		// The flow is there but damaged: its own finding says so.
	case err != nil:
		return err
	}
	a.out = append(a.out, a.taskFindings(cur, exists)...)
	return nil
}

func (a *auditor) flowExists(id string) bool {
	_, ok := a.flows[id]
	return ok
}

// taskRef is the time a task last changed, the reference's lastEventAt: a
// queued retry counts from its retry time, since it may not start before.
func taskRef(t *stored.Task) time.Time {
	ref := t.UpdatedAt
	if ref.IsZero() {
		ref = t.StartedAt
	}
	if ref.IsZero() {
		ref = t.CreatedAt
	}
	if t.Status == sdk.TaskQueued && t.RetryAt.After(ref) {
		ref = t.RetryAt
	}
	return ref
}

// taskFindings checks one task; flowExists says whether its flow record
// is there.
func (a *auditor) taskFindings(t *stored.Task, flowExists bool) []Finding {
	ref := taskRef(t)
	idle := a.now.Sub(ref)
	var out []Finding
	add := func(sev Severity, code Code, age *int64, detail string) {
		out = append(out, Finding{Kind: KindTask, Severity: sev, Code: code, Detail: detail, AgeMS: age,
			Status: string(t.Status), Token: t.ID, Task: t})
	}
	age := ageSince(a.now, ref)
	switch t.Status {
	case sdk.TaskQueued:
		if idle >= a.cfg.StaleQueued {
			add(Warn, StaleQueued, age, "queued task has not advanced recently")
		}
	case sdk.TaskRunning:
		if idle >= a.cfg.StaleRunning && !a.processAlive(t) {
			add(Error, StaleRunning, age, "running task appears stuck: no change recently and no live process")
		}
	case sdk.TaskLost:
		sev, detail := a.lost(t)
		add(sev, Lost, age, detail)
	}
	if ev := a.parked[t.ID]; ev != nil {
		add(Warn, DeliveryFailed, age, fmt.Sprintf("delivery of %s (event %d) to the flow's controller failed and is parked: %s", ev.Type, ev.Seq, orNone(ev.LastError)))
	}
	if t.Status.Terminal() && t.Status != sdk.TaskLost && t.CleanupAfter.IsZero() {
		add(Warn, MissingCleanup, age, "terminal task is missing cleanup_after")
	}
	if d := taskTimestamps(t); d != "" {
		add(Warn, InconsistentTimestamps, age, d)
	}
	if t.Status.Terminal() && !t.EndedAt.IsZero() && a.now.Sub(t.EndedAt) >= a.cfg.OrphanGrace {
		if d := a.orphan(t); d != "" {
			add(Error, OrphanProcess, ageSince(a.now, t.EndedAt), d)
		}
	}
	if d := nearLimit(t); d != "" {
		add(Warn, NearSizeLimit, nil, d)
	}
	if !flowExists {
		add(Error, DanglingTask, age, fmt.Sprintf("task points at flow %s, which does not exist", t.FlowID))
	}
	return out
}

// lost grades a lost task: a warning while it is retained, until its
// cleanup_after, and an error once that has passed (maintenance prunes it
// then, so it should be gone) or when it has none. cleanup_after is the
// one retention of a lost task: the engine stamps it when the task ends
// (engine.Config.TaskRetention after), maintenance prunes by it and by the
// flow retention of the same length, and the audit judges by it, so a
// lost task is never an error that maintenance cannot yet clear.
func (a *auditor) lost(t *stored.Task) (Severity, string) {
	detail := "task lost its backing process"
	if n := len(t.Errors); n > 0 && t.Errors[n-1] != "" {
		detail = t.Errors[n-1]
	}
	if t.CleanupAfter.IsZero() {
		return Error, detail + " and has no cleanup_after"
	}
	until := t.CleanupAfter.UTC().Format(time.RFC3339)
	if t.CleanupAfter.After(a.now) {
		return Warn, detail + " and is retained until " + until
	}
	return Error, detail + " and is past its retention (" + until + "); run flowgate tasks maintenance --apply"
}

// taskTimestamps returns what is wrong with t's timestamps (the first
// match, as in the reference), or "".
func taskTimestamps(t *stored.Task) string {
	switch {
	case !t.StartedAt.IsZero() && t.StartedAt.Before(t.CreatedAt):
		return "started_at is earlier than created_at"
	case !t.EndedAt.IsZero() && !t.StartedAt.IsZero() && t.EndedAt.Before(t.StartedAt):
		return "ended_at is earlier than started_at"
	case t.Status.Active() && !t.EndedAt.IsZero():
		return fmt.Sprintf("%s task should not already have ended_at", t.Status)
	}
	return ""
}

// processAlive reports whether t's shim or child still runs.
func (a *auditor) processAlive(t *stored.Task) bool {
	return (t.ShimPID > 0 && a.cfg.Alive(t.ShimPID, t.ShimStartTime)) ||
		(t.PID > 0 && a.cfg.Alive(t.PID, t.PIDStartTime))
}

// orphan describes the live process of an ended task, or returns "".
func (a *auditor) orphan(t *stored.Task) string {
	switch {
	case t.PID > 0 && a.cfg.Alive(t.PID, t.PIDStartTime):
		return fmt.Sprintf("%s task still has a live process (pid %d)", t.Status, t.PID)
	case t.ShimPID > 0 && a.cfg.Alive(t.ShimPID, t.ShimStartTime):
		return fmt.Sprintf("%s task still has a live shim (pid %d)", t.Status, t.ShimPID)
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "no error recorded"
	}
	return s
}
