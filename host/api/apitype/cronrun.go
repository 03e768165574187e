package apitype

import (
	"fmt"
	"time"
)

// The statuses of a cron run. RunStarting, RunRunning and RunBuffered
// are open (the run has not ended); RunPlanned is a time a backfill dry
// run would run, never stored.
const (
	RunStarting    = "starting"
	RunRunning     = "running"
	RunBuffered    = "buffered"
	RunOK          = "ok"
	RunError       = "error"
	RunCancelled   = "cancelled"
	RunSkipped     = "skipped"
	RunMissed      = "missed"
	RunInterrupted = "interrupted"
	RunPlanned     = "planned"
)

// What asked for a cron run (CronRun.Trigger).
const (
	TriggerSchedule = "schedule"
	TriggerManual   = "manual"
	TriggerBackfill = "backfill"
)

// GateWait is where a pipeline run stands while its flow waits at a gate:
// under the default overlap policy every later run of the job is skipped
// until someone answers it. Until is when an unanswered gate is denied
// (zero: never).
type GateWait struct {
	Step       string    `json:"step"`
	Kind       string    `json:"kind"`
	ApprovalID string    `json:"approval_id,omitempty"`
	FlowID     string    `json:"flow_id"`
	Since      time.Time `json:"since"`
	Until      time.Time `json:"until,omitzero"`
}

// String reads "waiting at gate G since T[, expires U]".
func (g GateWait) String() string {
	s := fmt.Sprintf("waiting at gate %s since %s", g.Step, g.Since.UTC().Format(time.RFC3339))
	if !g.Until.IsZero() {
		s += ", expires " + g.Until.UTC().Format(time.RFC3339)
	}
	return s
}

// CronRun is one scheduled time of a job, as recorded in its history.
// Trigger is TriggerSchedule (also when empty), TriggerManual or
// TriggerBackfill; Waiting is set on an open run whose flow waits at a
// gate.
type CronRun struct {
	ID            string    `json:"id"`
	JobID         string    `json:"job_id"`
	Scheduled     time.Time `json:"scheduled"`
	Status        string    `json:"status"`
	Trigger       string    `json:"trigger,omitempty"`
	By            string    `json:"by,omitempty"`
	Member        string    `json:"member,omitempty"`
	Session       string    `json:"session,omitempty"`
	TaskID        string    `json:"task_id,omitempty"`
	FlowID        string    `json:"flow_id,omitempty"`
	StartedAt     time.Time `json:"started_at,omitzero"`
	EndedAt       time.Time `json:"ended_at,omitzero"`
	Error         string    `json:"error,omitempty"`
	Delivery      string    `json:"delivery,omitempty"`
	DeliveryError string    `json:"delivery_error,omitempty"`
	Alert         string    `json:"alert,omitempty"`
	AlertError    string    `json:"alert_error,omitempty"`
	Waiting       *GateWait `json:"waiting,omitempty"`
}

// Open reports whether the run has not ended: it is starting, running,
// or buffered behind another run of its job.
func (r CronRun) Open() bool {
	return r.Status == RunStarting || r.Status == RunRunning || r.Status == RunBuffered
}

// CronJobStatus is a job with the scheduler's view of it: its active and
// buffered runs, why it was disabled, and the gate an active run waits
// at.
type CronJobStatus struct {
	Job            CronJob   `json:"job"`
	LastScheduled  time.Time `json:"last_scheduled,omitzero"`
	Active         int       `json:"active"`
	Buffered       int       `json:"buffered"`
	DisabledReason string    `json:"disabled_reason,omitempty"`
	Waiting        *GateWait `json:"waiting,omitempty"`
}

// CronStatus is what `flowgate cron status` prints.
type CronStatus struct {
	// Running is true when a gateway serves the home, so its scheduler
	// fires the jobs that come due. With no gateway nothing fires.
	Running bool `json:"running"`
	// Jobs is every job, enabled ones first in order of next run; [] when
	// there are none.
	Jobs []CronJobStatus `json:"jobs"`
}
