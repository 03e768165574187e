package api

import (
	"time"

	"github.com/flowgate/flowgate/host/api/apitype"
)

// The wire shapes of the cron routes. The job inputs are Go API
// without JSON tags (one field per CLI flag); their JSON spelling lives
// here. Jobs, runs and job statuses carry tags and travel as they are.

// jobInputJSON is the body of POST /v1/cron/jobs: apitype.CronJobInput with
// the schedule flags flattened. An absent field is the flag not given.
type jobInputJSON struct {
	Name                 string `json:"name,omitempty"`
	Description          string `json:"description,omitempty"`
	Cron                 string `json:"cron,omitempty"`
	TZ                   string `json:"tz,omitempty"`
	DST                  string `json:"dst,omitempty"`
	Every                string `json:"every,omitempty"`
	At                   string `json:"at,omitempty"`
	Stagger              string `json:"stagger,omitempty"`
	Exact                bool   `json:"exact,omitempty"`
	Pipeline             string `json:"pipeline,omitempty"`
	ArgsJSON             string `json:"args_json,omitempty"`
	Command              string `json:"command,omitempty"`
	GateTimeout          string `json:"gate_timeout,omitempty"`
	Session              string `json:"session,omitempty"`
	Overlap              string `json:"overlap,omitempty"`
	CatchUpWindow        string `json:"catchup_window,omitempty"`
	Webhook              string `json:"webhook,omitempty"`
	NotifyCommand        string `json:"notify_command,omitempty"`
	FailureAlertAfter    int    `json:"failure_alert_after,omitempty"`
	FailureAlertCooldown string `json:"failure_alert_cooldown,omitempty"`
	FailureAlertWebhook  string `json:"failure_alert_webhook,omitempty"`
	FailureAlertCommand  string `json:"failure_alert_command,omitempty"`
	DeleteAfterRun       bool   `json:"delete_after_run,omitempty"`
	Disabled             bool   `json:"disabled,omitempty"`

	// The destination flags of issue 29.
	AnnounceTo     []string `json:"announce_to,omitempty"`
	FailureAlertTo []string `json:"failure_alert_to,omitempty"`
	Notify         string   `json:"notify,omitempty"`
	NotifyTo       []string `json:"notify_to,omitempty"`
}

func jobInputToWire(in apitype.CronJobInput) jobInputJSON {
	return jobInputJSON{
		Name: in.Name, Description: in.Description,
		Cron: in.Schedule.Cron, TZ: in.Schedule.TZ, DST: in.Schedule.DST, Every: in.Schedule.Every, At: in.Schedule.At,
		Stagger: in.Schedule.Stagger, Exact: in.Schedule.Exact,
		Pipeline: in.Pipeline, ArgsJSON: in.ArgsJSON, Command: in.Command, GateTimeout: in.GateTimeout,
		Session: in.Session, Overlap: in.Overlap, CatchUpWindow: in.CatchUpWindow,
		Webhook: in.Webhook, NotifyCommand: in.NotifyCommand,
		FailureAlertAfter: in.FailureAlertAfter, FailureAlertCooldown: in.FailureAlertCooldown,
		FailureAlertWebhook: in.FailureAlertWebhook, FailureAlertCommand: in.FailureAlertCommand,
		DeleteAfterRun: in.DeleteAfterRun, Disabled: in.Disabled,
		AnnounceTo: in.AnnounceTo, FailureAlertTo: in.FailureAlertTo, Notify: in.Notify, NotifyTo: in.NotifyTo,
	}
}

func (j jobInputJSON) input() apitype.CronJobInput {
	return apitype.CronJobInput{
		Name: j.Name, Description: j.Description,
		Schedule: apitype.ScheduleFlags{Cron: j.Cron, TZ: j.TZ, DST: j.DST, Every: j.Every, At: j.At, Stagger: j.Stagger, Exact: j.Exact},
		Pipeline: j.Pipeline, ArgsJSON: j.ArgsJSON, Command: j.Command, GateTimeout: j.GateTimeout,
		Session: j.Session, Overlap: j.Overlap, CatchUpWindow: j.CatchUpWindow,
		Webhook: j.Webhook, NotifyCommand: j.NotifyCommand,
		FailureAlertAfter: j.FailureAlertAfter, FailureAlertCooldown: j.FailureAlertCooldown,
		FailureAlertWebhook: j.FailureAlertWebhook, FailureAlertCommand: j.FailureAlertCommand,
		DeleteAfterRun: j.DeleteAfterRun, Disabled: j.Disabled,
		AnnounceTo: j.AnnounceTo, FailureAlertTo: j.FailureAlertTo, Notify: j.Notify, NotifyTo: j.NotifyTo,
	}
}

// jobPatchJSON is the body of POST /v1/cron/jobs/{ref}/edit:
// apitype.CronJobPatch. Only the fields set travel; an absent field leaves
// the job's value alone, and "" (or 0, or false) sets it. It has
// JobPatch's fields, in JobPatch's order, so the two convert into each
// other and a field added to one and not the other fails to compile.
type jobPatchJSON struct {
	Name                 *string `json:"name,omitempty"`
	Description          *string `json:"description,omitempty"`
	Cron                 *string `json:"cron,omitempty"`
	TZ                   *string `json:"tz,omitempty"`
	DST                  *string `json:"dst,omitempty"`
	Every                *string `json:"every,omitempty"`
	At                   *string `json:"at,omitempty"`
	Stagger              *string `json:"stagger,omitempty"`
	Exact                *bool   `json:"exact,omitempty"`
	Pipeline             *string `json:"pipeline,omitempty"`
	ArgsJSON             *string `json:"args_json,omitempty"`
	Command              *string `json:"command,omitempty"`
	GateTimeout          *string `json:"gate_timeout,omitempty"`
	Session              *string `json:"session,omitempty"`
	Overlap              *string `json:"overlap,omitempty"`
	CatchUpWindow        *string `json:"catchup_window,omitempty"`
	Webhook              *string `json:"webhook,omitempty"`
	NotifyCommand        *string `json:"notify_command,omitempty"`
	FailureAlertAfter    *int    `json:"failure_alert_after,omitempty"`
	FailureAlertCooldown *string `json:"failure_alert_cooldown,omitempty"`
	FailureAlertWebhook  *string `json:"failure_alert_webhook,omitempty"`
	FailureAlertCommand  *string `json:"failure_alert_command,omitempty"`
	DeleteAfterRun       *bool   `json:"delete_after_run,omitempty"`
	Disabled             *bool   `json:"disabled,omitempty"`

	AnnounceTo     *[]string `json:"announce_to,omitempty"`
	FailureAlertTo *[]string `json:"failure_alert_to,omitempty"`
	NotifyTo       *[]string `json:"notify_to,omitempty"`
	Notify         *string   `json:"notify,omitempty"`
}

// byRequest is the body of a POST whose only field is who asked: a cron
// job's run, enable and disable, and a trigger's enable and disable.
type byRequest struct {
	By string `json:"by,omitempty"`
}

// backfillRequest is the body of POST /v1/cron/jobs/{ref}/backfill:
// apitype.BackfillOptions. An absent from or to is refused by the
// scheduler, naming the flag.
type backfillRequest struct {
	From    time.Time       `json:"from,omitzero"`
	To      time.Time       `json:"to,omitzero"`
	DryRun  bool            `json:"dry_run,omitempty"`
	Overlap apitype.Overlap `json:"overlap,omitempty"`
	By      string          `json:"by,omitempty"`
}

func backfillToWire(o apitype.BackfillOptions) backfillRequest {
	return backfillRequest{From: o.From, To: o.To, DryRun: o.DryRun, Overlap: o.Overlap, By: o.By}
}

func (b backfillRequest) options() apitype.BackfillOptions {
	return apitype.BackfillOptions{From: b.From, To: b.To, DryRun: b.DryRun, Overlap: b.Overlap, By: b.By}
}

// jobListJSON is the answer to GET /v1/cron/jobs. Jobs is [] when empty.
type jobListJSON struct {
	Jobs []apitype.CronJob `json:"jobs"`
}

// runListJSON is the answer to the runs and backfill routes. Runs is []
// when empty.
type runListJSON struct {
	Runs []apitype.CronRun `json:"runs"`
}

func runListToWire(runs []apitype.CronRun) runListJSON {
	if runs == nil {
		runs = []apitype.CronRun{}
	}
	return runListJSON{Runs: runs}
}
