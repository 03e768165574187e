package api

import (
	"errors"
	"time"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
)

// The seam between the scheduler's types and the API's cron words, as
// toapi.go is for the engine's: a job, run or status leaves the scheduler
// here as apitype, and a job's input, patch or backfill options enter it
// here. The nested types differ in name, so most of these copy field by
// field; toapi_shape_test.go fails when a field is added on one side
// only or is not copied.

func cronJobOf(j scheduler.Job) apitype.CronJob {
	s := j.Schedule
	out := apitype.CronJob{
		ID: j.ID, Name: j.Name, Description: j.Description, Enabled: j.Enabled,
		Schedule: apitype.CronSchedule{Kind: apitype.ScheduleKind(s.Kind), Expr: s.Expr, TZ: s.TZ, DST: apitype.DSTPolicy(s.DST),
			Every: apitype.Duration(s.Every), Anchor: s.Anchor, At: s.At, Stagger: apitype.Duration(s.Stagger), Exact: s.Exact},
		Payload: apitype.CronPayload{Kind: apitype.CronPayloadKind(j.Payload.Kind), Pipeline: j.Payload.Pipeline,
			Args: j.Payload.Args, Command: j.Payload.Command, GateTimeout: apitype.Duration(j.Payload.GateTimeout)},
		Session: j.Session, Overlap: apitype.Overlap(j.Overlap), CatchUpWindow: apitype.Duration(j.CatchUpWindow),
		Delivery: cronDeliveryOf(j.Delivery),
		FailureAlert: apitype.CronFailureAlert{After: j.FailureAlert.After, Cooldown: apitype.Duration(j.FailureAlert.Cooldown),
			Dests: j.FailureAlert.Dests},
		DeleteAfterRun: j.DeleteAfterRun, CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt,
		State:    apitype.CronJobState(j.State),
		Announce: j.Announce, Notify: j.Notify, NotifyTo: j.NotifyTo,
	}
	if to := j.FailureAlert.To; to != nil {
		d := cronDeliveryOf(*to)
		out.FailureAlert.To = &d
	}
	if t := j.LastToggle; t != nil {
		out.LastToggle = &apitype.CronToggle{Enabled: t.Enabled, By: t.By, At: t.At}
	}
	return out
}

func cronDeliveryOf(d scheduler.Delivery) apitype.CronDelivery {
	return apitype.CronDelivery{Kind: apitype.CronDeliveryKind(d.Kind), URL: d.URL, Command: d.Command, Dest: d.Dest}
}

// cronJobOrErr converts the job a scheduler call returns, with its error
// in the API's words.
func cronJobOrErr(j scheduler.Job, err error) (apitype.CronJob, error) {
	if err != nil {
		return apitype.CronJob{}, flagErrorOf(err)
	}
	return cronJobOf(j), nil
}

func cronJobsOf(js []scheduler.Job) []apitype.CronJob {
	if js == nil {
		return nil
	}
	out := make([]apitype.CronJob, len(js))
	for i, j := range js {
		out[i] = cronJobOf(j)
	}
	return out
}

func gateWaitOf(g *scheduler.GateWait) *apitype.GateWait {
	if g == nil {
		return nil
	}
	w := apitype.GateWait(*g)
	return &w
}

func cronRunOf(r scheduler.Run) apitype.CronRun {
	return apitype.CronRun{ID: r.ID, JobID: r.JobID, Scheduled: r.Scheduled, Status: r.Status, Trigger: r.Trigger,
		By: r.By, Member: r.Member, Session: r.Session, TaskID: r.TaskID, FlowID: r.FlowID,
		StartedAt: r.StartedAt, EndedAt: r.EndedAt, Error: r.Error, Delivery: r.Delivery, DeliveryError: r.DeliveryError,
		Alert: r.Alert, AlertError: r.AlertError, Waiting: gateWaitOf(r.Waiting)}
}

func cronRunsOf(rs []scheduler.Run) []apitype.CronRun {
	if rs == nil {
		return nil
	}
	out := make([]apitype.CronRun, len(rs))
	for i, r := range rs {
		out[i] = cronRunOf(r)
	}
	return out
}

func cronJobStatusOf(s scheduler.JobStatus) apitype.CronJobStatus {
	return apitype.CronJobStatus{Job: cronJobOf(s.Job), LastScheduled: s.LastScheduled, Active: s.Active,
		Buffered: s.Buffered, DisabledReason: s.DisabledReason, Waiting: gateWaitOf(s.Waiting)}
}

func cronJobInputOf(in apitype.CronJobInput) scheduler.JobInput {
	return scheduler.JobInput{Name: in.Name, Description: in.Description, Schedule: schedule.Flags(in.Schedule),
		Pipeline: in.Pipeline, ArgsJSON: in.ArgsJSON, Command: in.Command, GateTimeout: in.GateTimeout,
		Session: in.Session, Overlap: in.Overlap, CatchUpWindow: in.CatchUpWindow, Webhook: in.Webhook,
		NotifyCommand: in.NotifyCommand, FailureAlertAfter: in.FailureAlertAfter, FailureAlertCooldown: in.FailureAlertCooldown,
		FailureAlertWebhook: in.FailureAlertWebhook, FailureAlertCommand: in.FailureAlertCommand,
		DeleteAfterRun: in.DeleteAfterRun, Disabled: in.Disabled, AnnounceTo: in.AnnounceTo,
		FailureAlertTo: in.FailureAlertTo, Notify: in.Notify, NotifyTo: in.NotifyTo}
}

func backfillOptionsOf(o apitype.BackfillOptions) scheduler.BackfillOptions {
	return scheduler.BackfillOptions{From: o.From, To: o.To, DryRun: o.DryRun, Overlap: schedule.Overlap(o.Overlap), By: o.By}
}

// flagErrorOf returns err with a *schedule.FlagError in it replaced by
// the API's *apitype.FlagError, so errors.As finds the same type on a
// Local client as on a Remote one. Other errors pass unchanged.
func flagErrorOf(err error) error {
	if fe, ok := errors.AsType[*schedule.FlagError](err); ok {
		return &apitype.FlagError{Flag: fe.Flag, Rule: fe.Rule}
	}
	return err
}

// CronFireSchedule is the schedule job j fires on, staggered by the
// offset its id picks (scheduler.Job.FireSchedule): its next times and
// its stagger window are computed from it.
func CronFireSchedule(j apitype.CronJob) schedule.Schedule {
	s := j.Schedule
	return scheduler.Job{ID: j.ID, Schedule: scheduler.JobSchedule{Kind: schedule.Kind(s.Kind), Expr: s.Expr, TZ: s.TZ,
		DST: schedule.DSTPolicy(s.DST), Every: scheduler.Duration(s.Every), Anchor: s.Anchor, At: s.At,
		Stagger: scheduler.Duration(s.Stagger), Exact: s.Exact}}.FireSchedule()
}

// CronStagger is the stagger window of job j and the offset within it
// that its id picks; both zero for a job that fires as written.
func CronStagger(j apitype.CronJob) (window, offset time.Duration) {
	return CronFireSchedule(j).Window()
}

// ParseOverlap reads an overlap policy as --overlap spells it; an
// unknown one is a *apitype.FlagError naming --overlap.
func ParseOverlap(v string) (apitype.Overlap, error) {
	o, err := schedule.ParseOverlap(v)
	return apitype.Overlap(o), flagErrorOf(err)
}

// CronRunID is the id of job jobID's run scheduled at t
// (scheduler.RunID).
func CronRunID(jobID string, t time.Time) string { return scheduler.RunID(jobID, t) }

// ParseGateTimeout reads a gate timeout as --gate-timeout spells it
// (scheduler.ParseGateTimeout).
func ParseGateTimeout(v string) (time.Duration, error) { return scheduler.ParseGateTimeout(v) }
