package api

import (
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/store"
)

// The words of the trigger, plugin, audit and status calls, named here
// for the commands that speak only to api. Like the cron words
// (cronnames.go) they are the API's own types, converted at one seam
// (toapi_other.go).
type (
	// Trigger is a webhook trigger; TriggerInput a new one, TriggerRun
	// one delivery it accepted.
	Trigger      = apitype.Trigger
	TriggerInput = apitype.TriggerInput
	TriggerRun   = apitype.TriggerRun

	// PluginStatus describes one controller plugin of a running gateway.
	PluginStatus = apitype.PluginStatus

	// AuditReport is what Audit finds, made of findings, their summary
	// and the checks skipped.
	AuditReport   = apitype.AuditReport
	AuditFinding  = apitype.AuditFinding
	AuditSummary  = apitype.AuditSummary
	AuditSkip     = apitype.AuditSkip
	AuditSeverity = apitype.AuditSeverity
	AuditCode     = apitype.AuditCode

	// WriteHealth says whether a gateway's store or task files take
	// writes, as GatewayStatus reports it.
	WriteHealth = apitype.WriteHealth
)

// ErrStoreLocked says another process holds the store file
// (store.ErrLocked).
var ErrStoreLocked = store.ErrLocked

const (
	// TargetPipeline is the target of a trigger that runs a workflow.
	TargetPipeline = apitype.TargetPipeline
	// PluginRunning is the state of a plugin whose process serves.
	PluginRunning = apitype.PluginRunning
	// AuditKindTask marks a finding about a task (else about a flow).
	AuditKindTask = apitype.AuditKindTask
)

// The words of the status, store, maintenance, continuation, session and
// task log calls, named here for the commands that speak only to api.
type (
	// GatewayStatus is what Status answers; Readiness what /readyz does.
	GatewayStatus = apitype.GatewayStatus
	Readiness     = apitype.Readiness

	// BackupResult, CheckReport (of CheckProblem) and SalvageResult are
	// what backup, check and salvage report.
	BackupResult  = apitype.BackupResult
	CheckReport   = apitype.CheckReport
	CheckProblem  = apitype.CheckProblem
	SalvageResult = apitype.SalvageResult

	// MaintenanceReport is what Maintain answers.
	MaintenanceReport = apitype.MaintenanceReport

	// ContinueResult is what ContinueFlow answers.
	ContinueResult = apitype.ContinueResult
	// CronStatus is what CronStatus answers.
	CronStatus = apitype.CronStatus
	// ArchiveLineageRequest is what ArchiveLineage is asked.
	ArchiveLineageRequest = apitype.ArchiveLineageRequest
	// LogQuery is what TaskLog is asked and LogChunk what it answers.
	LogQuery = apitype.LogQuery
	LogChunk = apitype.LogChunk
)

// The kind of a CheckProblem for page damage, and the repairs a
// CheckProblem names.
const (
	ProblemPage       = apitype.ProblemPage
	RepairMaintenance = apitype.RepairMaintenance
	RepairRestore     = apitype.RepairRestore
)
