package api

import (
	"github.com/flowgate/flowgate/host/audit"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/trigger"
)

// The words of the trigger, plugin, audit and status calls. Like the
// cron words (cronnames.go), they are still the types of the packages
// that own them, named here so that a command speaks only to api.
type (
	// Trigger is a webhook trigger (trigger.Trigger); TriggerInput a new
	// one, TriggerRun one delivery it accepted.
	Trigger      = trigger.Trigger
	TriggerInput = trigger.Input
	TriggerRun   = trigger.Run

	// PluginStatus describes one controller plugin of a running gateway
	// (pluginhost.Status).
	PluginStatus = pluginhost.Status

	// AuditReport is what Audit finds (audit.Report), made of findings,
	// their summary and the checks skipped.
	AuditReport   = audit.Report
	AuditFinding  = audit.Finding
	AuditSummary  = audit.Summary
	AuditSkip     = audit.Skip
	AuditSeverity = audit.Severity
	AuditCode     = audit.Code

	// WriteHealth says whether a gateway's store or task files take
	// writes (store.WriteHealth), as GatewayStatus reports it.
	WriteHealth = store.WriteHealth
)

// ErrStoreLocked says another process holds the store file
// (store.ErrLocked).
var ErrStoreLocked = store.ErrLocked

const (
	// TargetPipeline is the target of a trigger that runs a workflow.
	TargetPipeline = trigger.TargetPipeline
	// PluginRunning is the state of a plugin whose process serves.
	PluginRunning = pluginhost.StateRunning
	// AuditKindTask marks a finding about a task (else about a flow).
	AuditKindTask = audit.KindTask
)

// AuditSeverities lists the severities of audit findings (audit.Severities).
func AuditSeverities() []audit.Severity { return audit.Severities() }

// AuditCodes lists the codes of audit findings (audit.Codes).
func AuditCodes() []audit.Code { return audit.Codes() }
