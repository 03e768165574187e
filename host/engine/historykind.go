package engine

// HistoryKind names the kind of change a HistoryEntry records.
type HistoryKind string

// The kinds of history entries. Flow changes:
const (
	// HistoryFlowCreated: the flow was created.
	HistoryFlowCreated HistoryKind = "flow.created"
	// HistoryContinuation: the flow was created as the continuation of
	// another (data.source_flow_id).
	HistoryContinuation HistoryKind = "continuation"
	// HistoryContinued: a continuation of this flow was accepted
	// (data.successor_id).
	HistoryContinued HistoryKind = "continued"
	// HistoryStatus: the flow moved from one status to another.
	HistoryStatus HistoryKind = "status"
	// HistoryRevision: the flow changed without moving (its state,
	// current step, wait or blocked summary; data.fields names which).
	HistoryRevision HistoryKind = "revision"
	// HistoryGateOpened: the flow started waiting at a gate.
	HistoryGateOpened HistoryKind = "gate.opened"
	// HistoryGateAnswered: a gate was decided; By is who answered.
	HistoryGateAnswered HistoryKind = "gate.answered"
	// HistoryGateRefused: an answer to a gate was refused and the gate
	// stays open (data.error says why, data.decision what was answered);
	// By is who answered.
	HistoryGateRefused HistoryKind = "gate.refused"
	// HistoryCancelRequested: a cancel was requested; By is who asked.
	HistoryCancelRequested HistoryKind = "cancel.requested"
	// HistoryControllerError: delivering an event to the controller
	// failed (data.parked when delivery stopped).
	HistoryControllerError HistoryKind = "controller.error"
	// HistoryTimerSet: the controller set a wake (data.key, data.at).
	HistoryTimerSet HistoryKind = "timer.set"
	// HistoryCorrected: a mirrored flow marked lost took its task's real
	// outcome, read from the task's shim record (see
	// Engine.CorrectLostTask).
	HistoryCorrected HistoryKind = "corrected"
	// HistoryTimerFired: a wake came due and flow.woken was queued
	// (data.key, data.at).
	HistoryTimerFired HistoryKind = "timer.fired"
	// HistoryRetry: a single run was retried (Engine.RetryFlow); By is
	// who asked, data.attempt the run it starts, data.task_id its new
	// task and data.retry_of the task it runs again.
	HistoryRetry HistoryKind = "retry"
)

// Task changes; their entries carry the task's id.
const (
	HistoryTaskCreated  HistoryKind = "task.created"
	HistoryTaskStarted  HistoryKind = "task.started"
	HistoryTaskRetried  HistoryKind = "task.retried"
	HistoryTaskFinished HistoryKind = "task.finished"
	HistoryTaskLost     HistoryKind = "task.lost"
	// HistoryTaskCorrected: a task marked lost got its real outcome
	// from its shim record (Engine.CorrectLostTask); the summary names
	// the evidence, data.corrected_from the status it replaced.
	HistoryTaskCorrected       HistoryKind = "task.corrected"
	HistoryTaskCancelRequested HistoryKind = "task.cancel_requested"
	// HistoryTaskUpdated: bookkeeping (process identity, cleanup time).
	HistoryTaskUpdated HistoryKind = "task.updated"
	// HistoryMilestone: the task reported a milestone.
	HistoryMilestone HistoryKind = "milestone"
	// HistoryProgress: the task reported progress; the first entries a
	// full history drops.
	HistoryProgress HistoryKind = "progress"
	// HistoryDiagnosis: the task's diagnosis record changed.
	HistoryDiagnosis HistoryKind = "diagnosis"
	// HistoryWake: the task continues an earlier session; the summary is
	// its wake banner, data.session the task's session record.
	HistoryWake HistoryKind = "session.wake"
)

// The drop tiers of the history bound (see history.go).
const (
	tierProgress = "p"
	tierOrdinary = "o"
)

// Kept reports whether entries of kind k are kept however long the
// history grows: milestones, decisions and the flow's turning points.
func (k HistoryKind) Kept() bool {
	switch k {
	case HistoryFlowCreated, HistoryContinuation, HistoryContinued, HistoryGateOpened,
		HistoryGateAnswered, HistoryCancelRequested, HistoryMilestone, HistoryDiagnosis, HistoryWake,
		HistoryCorrected, HistoryTaskCorrected, HistoryRetry:
		return true
	}
	return false
}

// tier is the drop tier of kind k, or "" for a kind that is kept.
func (k HistoryKind) tier() string {
	switch {
	case k.Kept():
		return ""
	case k == HistoryProgress:
		return tierProgress
	}
	return tierOrdinary
}
