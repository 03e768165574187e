package api

import "github.com/flowgate/flowgate/host/api/apitype"

// The words of the Cron calls, named here for the commands that speak
// only to api. They are the API's own types (package apitype), converted
// from and to the scheduler's at one seam (toapi_cron.go).
type (
	// CronJob is a scheduled job.
	CronJob = apitype.CronJob
	// CronJobInput is a new job as its flags give it.
	CronJobInput = apitype.CronJobInput
	// CronJobPatch is the change EditJob makes.
	CronJobPatch = apitype.CronJobPatch
	// CronJobStatus is one job as the scheduler sees it (CronStatus).
	CronJobStatus = apitype.CronJobStatus
	// CronRun is one run of a job.
	CronRun = apitype.CronRun
	// CronDelivery is where a job's outcome goes.
	CronDelivery = apitype.CronDelivery
	// BackfillOptions bound and steer BackfillJob.
	BackfillOptions = apitype.BackfillOptions
	// FlagError is a job input the scheduler refuses, naming the CLI
	// flag at fault and the rule it broke.
	FlagError = apitype.FlagError
)

// The kinds of schedule, payload and delivery a job has, the statuses of
// its runs, and what started a run.
const (
	ScheduleCron  = apitype.ScheduleCron
	ScheduleEvery = apitype.ScheduleEvery
	ScheduleAt    = apitype.ScheduleAt
	DSTShift      = apitype.DSTShift
	OverlapSkip   = apitype.OverlapSkip

	PayloadPipeline = apitype.PayloadPipeline
	PayloadCommand  = apitype.PayloadCommand

	DeliveryWebhook = apitype.DeliveryWebhook
	DeliveryCommand = apitype.DeliveryCommand
	DeliveryDest    = apitype.DeliveryDest

	RunRunning  = apitype.RunRunning
	RunBuffered = apitype.RunBuffered
	RunSkipped  = apitype.RunSkipped
	RunOK       = apitype.RunOK

	TriggerSchedule = apitype.TriggerSchedule
)
