package api

import (
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/audit"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/trigger"
)

// The seam between the trigger, plugin, audit and store types and the
// API's words for them (see toapi_cron.go for the cron words).

func triggerOf(t trigger.Trigger) apitype.Trigger {
	out := apitype.Trigger{Name: t.Name, Enabled: t.Enabled, Target: t.Target, Pipeline: t.Pipeline,
		Controller: t.Controller, ArgsFrom: t.ArgsFrom, SecretEnv: t.SecretEnv, TokenEnv: t.TokenEnv,
		MaxBody: t.MaxBody, Rate: t.Rate, Burst: t.Burst, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if g := t.LastToggle; g != nil {
		out.LastToggle = &apitype.TriggerToggle{Enabled: g.Enabled, By: g.By, At: g.At}
	}
	return out
}

// triggerOrErr converts the trigger a trigger call returns.
func triggerOrErr(t trigger.Trigger, err error) (apitype.Trigger, error) {
	if err != nil {
		return apitype.Trigger{}, err
	}
	return triggerOf(t), nil
}

func triggersOf(ts []trigger.Trigger) []apitype.Trigger {
	if ts == nil {
		return nil
	}
	out := make([]apitype.Trigger, len(ts))
	for i, t := range ts {
		out[i] = triggerOf(t)
	}
	return out
}

func triggerRunsOf(rs []trigger.Run) []apitype.TriggerRun {
	if rs == nil {
		return nil
	}
	out := make([]apitype.TriggerRun, len(rs))
	for i, r := range rs {
		out[i] = apitype.TriggerRun(r)
	}
	return out
}

// PluginStatusOf is plugin status s in the API's words; a gateway's
// client answers Plugins and ReloadPlugin with it.
func PluginStatusOf(s pluginhost.Status) apitype.PluginStatus {
	return apitype.PluginStatus{Name: s.Name, Version: s.Version, State: apitype.PluginState(s.State), PID: s.PID,
		InProcess: s.InProcess, Restarts: s.Restarts, Epoch: s.Epoch, LastError: s.LastError, Since: s.Since,
		Pending: s.Pending, Stages: s.Stages, Watch: s.Watch, Exit: s.Exit, Stderr: s.Stderr}
}

// PluginStatusesOf is each of ss in the API's words.
func PluginStatusesOf(ss []pluginhost.Status) []apitype.PluginStatus {
	if ss == nil {
		return nil
	}
	out := make([]apitype.PluginStatus, len(ss))
	for i, s := range ss {
		out[i] = PluginStatusOf(s)
	}
	return out
}

// AuditReportOf is audit report r in the API's words; a gateway's client
// answers Audit with it.
func AuditReportOf(r audit.Report) apitype.AuditReport {
	out := apitype.AuditReport{Summary: auditSummaryOf(r.Summary)}
	if r.Findings != nil {
		out.Findings = make([]apitype.AuditFinding, len(r.Findings))
		for i, f := range r.Findings {
			out.Findings[i] = apitype.AuditFinding{Kind: apitype.AuditKind(f.Kind), Severity: apitype.AuditSeverity(f.Severity),
				Code: apitype.AuditCode(f.Code), Detail: f.Detail, AgeMS: f.AgeMS, Status: f.Status, Token: f.Token,
				Task: f.Task, Flow: f.Flow}
		}
	}
	if r.Skipped != nil {
		out.Skipped = make([]apitype.AuditSkip, len(r.Skipped))
		for i, s := range r.Skipped {
			out.Skipped[i] = apitype.AuditSkip{Code: apitype.AuditCode(s.Code), Reason: s.Reason}
		}
	}
	return out
}

// auditReportOrErr converts the report an audit returns.
func auditReportOrErr(r audit.Report, err error) (apitype.AuditReport, error) {
	if err != nil {
		return apitype.AuditReport{}, err
	}
	return AuditReportOf(r), nil
}

func auditSummaryOf(s audit.Summary) apitype.AuditSummary {
	return apitype.AuditSummary{AuditCounts: auditCountsOf(s.Counts), TaskFlows: auditCountsOf(s.TaskFlows),
		Combined: apitype.AuditCombined(s.Combined)}
}

func auditCountsOf(c audit.Counts) apitype.AuditCounts {
	out := apitype.AuditCounts{Total: c.Total, Warnings: c.Warnings, Errors: c.Errors}
	if c.ByCode != nil {
		out.ByCode = make(map[apitype.AuditCode]int, len(c.ByCode))
		for code, n := range c.ByCode {
			out.ByCode[apitype.AuditCode(code)] = n
		}
	}
	return out
}

// AuditSeverities lists the severities of audit findings, lowest first.
func AuditSeverities() []apitype.AuditSeverity {
	var out []apitype.AuditSeverity
	for _, s := range audit.Severities() {
		out = append(out, apitype.AuditSeverity(s))
	}
	return out
}

// AuditCodes lists the codes of audit findings, task codes first.
func AuditCodes() []apitype.AuditCode {
	var out []apitype.AuditCode
	for _, c := range audit.Codes() {
		out = append(out, apitype.AuditCode(c))
	}
	return out
}

// WriteHealthOf is write health h in the API's words, for a
// GatewayStatus or a probe's answer.
func WriteHealthOf(h store.WriteHealth) *apitype.WriteHealth {
	out := apitype.WriteHealth(h)
	return &out
}
