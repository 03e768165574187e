package apitype

import (
	"encoding/json"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

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
	// outcome, read from the task's shim record.
	HistoryCorrected HistoryKind = "corrected"
	// HistoryTimerFired: a wake came due and flow.woken was queued
	// (data.key, data.at).
	HistoryTimerFired HistoryKind = "timer.fired"
	// HistoryRetry: a single run was retried; By is
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
	// from its shim record; the summary names
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

// HistoryEntry is one change in a flow's history.
type HistoryEntry struct {
	// Seq numbers the flow's entries from 1, without gaps except where
	// the bound dropped entries.
	Seq int64 `json:"seq"`
	// At is the engine's clock when the change committed.
	At   time.Time   `json:"at"`
	Kind HistoryKind `json:"kind"`
	// Summary says what happened in one line, for people.
	Summary string `json:"summary"`
	// By names who made the change when it is known.
	By string `json:"by,omitempty"`
	// TaskID names the task the change is about, if any.
	TaskID string `json:"task_id,omitempty"`
	// Data holds the change's details as a JSON object; nil when there
	// are none.
	Data json.RawMessage `json:"data,omitempty"`
}

// HistoryPage is one page of a flow's history.
type HistoryPage struct {
	Entries []HistoryEntry `json:"entries"`
	// Next is the seq to pass as after for the following page: the last
	// entry's, or the after asked for when the page is empty.
	Next int64 `json:"next"`
	// Dropped counts the entries the bound has dropped from this flow's
	// history so far.
	Dropped int64 `json:"dropped,omitempty"`
	// Status is the flow's status when the page was read, so a follower
	// knows when the flow has ended.
	Status sdk.FlowStatus `json:"status"`
}
