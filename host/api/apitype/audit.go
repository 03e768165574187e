package apitype

import (
	"slices"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// AuditKind says what a finding is about: a task or a flow.
type AuditKind string

// The finding kinds, as the reference names them.
const (
	AuditKindTask AuditKind = "task"
	AuditKindFlow AuditKind = "task_flow"
)

// AuditSeverity ranks a finding: errors need someone now, warnings soon.
type AuditSeverity string

// The severities, lowest first.
const (
	AuditWarn  AuditSeverity = "warn"
	AuditError AuditSeverity = "error"
)

// AtLeast reports whether s is as severe as min or more.
func (s AuditSeverity) AtLeast(min AuditSeverity) bool {
	order := []AuditSeverity{AuditWarn, AuditError}
	return slices.Index(order, s) >= slices.Index(order, min)
}

// AuditCode names what a finding found (see package audit for each).
type AuditCode string

// AuditFinding is one problem the audit found. Token is the task or flow
// id; Task or Flow is the record as read, absent when there is none.
// AgeMS is how long the condition has held, nil when it has no reference
// time.
type AuditFinding struct {
	Kind     AuditKind     `json:"kind"`
	Severity AuditSeverity `json:"severity"`
	Code     AuditCode     `json:"code"`
	Detail   string        `json:"detail"`
	AgeMS    *int64        `json:"age_ms,omitempty"`
	Status   string        `json:"status"`
	Token    string        `json:"token"`
	Task     *stored.Task  `json:"task,omitempty"`
	Flow     *sdk.Flow     `json:"flow,omitempty"`
}

// AuditCounts is the total, warnings and errors of a set of findings,
// with a count for every code of their kind (zero included).
type AuditCounts struct {
	Total    int               `json:"total"`
	Warnings int               `json:"warnings"`
	Errors   int               `json:"errors"`
	ByCode   map[AuditCode]int `json:"by_code"`
}

// AuditCombined is the total of task and flow findings together.
type AuditCombined struct {
	Total    int `json:"total"`
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
}

// AuditSummary has the reference's shape: the task counts at the top
// level, the flow counts under task_flows, both under combined.
type AuditSummary struct {
	AuditCounts
	TaskFlows AuditCounts   `json:"task_flows"`
	Combined  AuditCombined `json:"combined"`
}

// AuditSkip is a check the audit skipped, and why.
type AuditSkip struct {
	Code   AuditCode `json:"code"`
	Reason string    `json:"reason"`
}

// AuditReport is what Audit finds: every finding, sorted, their summary,
// and the checks skipped.
type AuditReport struct {
	Findings []AuditFinding `json:"findings"`
	Summary  AuditSummary   `json:"summary"`
	Skipped  []AuditSkip    `json:"skipped"`
}
