package api

import (
	"time"

	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
)

// The words of the Cron calls. Unlike the flow and task words (package
// apitype), these are still the scheduler's own types, named here so
// that a command speaks only to api: when the cron records get API
// types of their own, they replace these names and no command changes.
type (
	// CronJob is a scheduled job (scheduler.Job).
	CronJob = scheduler.Job
	// CronJobInput is a new job as its flags give it (scheduler.JobInput).
	CronJobInput = scheduler.JobInput
	// CronJobPatch is the change EditJob makes (scheduler.JobPatch).
	CronJobPatch = scheduler.JobPatch
	// CronJobStatus is one job as the scheduler sees it (CronStatus).
	CronJobStatus = scheduler.JobStatus
	// CronRun is one run of a job (scheduler.Run).
	CronRun = scheduler.Run
	// CronDelivery is where a job's outcome goes (scheduler.Delivery).
	CronDelivery = scheduler.Delivery
	// BackfillOptions bound and steer BackfillJob.
	BackfillOptions = scheduler.BackfillOptions
	// FlagError is a job input the scheduler refuses, naming the CLI
	// flag at fault and the rule it broke (schedule.FlagError).
	FlagError = schedule.FlagError
)

// The kinds of schedule, payload and delivery a job has, the statuses of
// its runs, and what started a run.
const (
	ScheduleCron  = schedule.KindCron
	ScheduleEvery = schedule.KindEvery
	ScheduleAt    = schedule.KindAt
	DSTShift      = schedule.DSTShift
	OverlapSkip   = schedule.OverlapSkip

	PayloadPipeline = scheduler.PayloadPipeline
	PayloadCommand  = scheduler.PayloadCommand

	DeliveryWebhook = scheduler.DeliveryWebhook
	DeliveryCommand = scheduler.DeliveryCommand
	DeliveryDest    = scheduler.DeliveryDest

	RunRunning  = scheduler.RunRunning
	RunBuffered = scheduler.RunBuffered
	RunSkipped  = scheduler.RunSkipped
	RunOK       = scheduler.RunOK

	TriggerSchedule = scheduler.TriggerSchedule
)

// ParseOverlap reads an overlap policy as --overlap spells it
// (schedule.ParseOverlap).
func ParseOverlap(v string) (schedule.Overlap, error) { return schedule.ParseOverlap(v) }

// CronRunID is the id of job jobID's run scheduled at t
// (scheduler.RunID).
func CronRunID(jobID string, t time.Time) string { return scheduler.RunID(jobID, t) }

// ParseGateTimeout reads a gate timeout as --gate-timeout spells it
// (scheduler.ParseGateTimeout).
func ParseGateTimeout(v string) (time.Duration, error) { return scheduler.ParseGateTimeout(v) }
