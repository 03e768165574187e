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
