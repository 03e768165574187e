package apitype

import (
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// ScheduleFlags are a job's schedule flags as typed: --cron, --tz, --dst,
// --every, --at, --stagger and --exact. Empty strings mean not given.
type ScheduleFlags struct {
	Cron    string
	TZ      string
	DST     string
	Every   string
	At      string
	Stagger string
	Exact   bool
}

// CronJobInput is a new job as typed on the command line, one field per
// flag; empty strings mean the flag was not given (AddJob).
type CronJobInput struct {
	Name                 string
	Description          string
	Schedule             ScheduleFlags
	Pipeline             string
	ArgsJSON             string
	Command              string
	GateTimeout          string
	Session              string
	Overlap              string
	CatchUpWindow        string
	Webhook              string
	NotifyCommand        string
	FailureAlertAfter    int
	FailureAlertCooldown string
	FailureAlertWebhook  string
	FailureAlertCommand  string
	DeleteAfterRun       bool
	Disabled             bool
	AnnounceTo           []string
	FailureAlertTo       []string
	Notify               string
	NotifyTo             []string
}

// CronJobPatch changes some fields of a job, one pointer per CLI flag;
// nil leaves a field as it is (EditJob). The lists replace the whole
// list; a list of empty strings clears it.
type CronJobPatch struct {
	Name, Description               *string
	Cron, TZ, DST, Every, At        *string
	Stagger                         *string
	Exact                           *bool
	Pipeline, ArgsJSON, Command     *string
	GateTimeout                     *string
	Session, Overlap, CatchUpWindow *string
	Webhook, NotifyCommand          *string
	FailureAlertAfter               *int
	FailureAlertCooldown            *string
	FailureAlertWebhook             *string
	FailureAlertCommand             *string
	DeleteAfterRun, Disabled        *bool

	AnnounceTo, FailureAlertTo, NotifyTo *[]string
	Notify                               *string
}

// BackfillOptions bound and steer BackfillJob: the scheduled times in
// (From, To] run (To not in the future), or with DryRun are only listed;
// Overlap, if set, replaces the job's policy; By names who asked.
type BackfillOptions struct {
	From, To time.Time
	DryRun   bool
	Overlap  Overlap
	By       string
}

// FlagError is a job input the gateway refuses: the CLI flag at fault,
// with its dashes (empty when the rule is about a choice between flags),
// and the rule it broke. It matches sdk.ErrInvalid under errors.Is.
type FlagError struct {
	Flag string
	Rule string
}

// Error returns "<flag>: <rule>", or the rule alone when no one flag is
// at fault.
func (e *FlagError) Error() string {
	if e.Flag == "" {
		return e.Rule
	}
	return e.Flag + ": " + e.Rule
}

// Is reports whether target is sdk.ErrInvalid.
func (e *FlagError) Is(target error) bool { return target == sdk.ErrInvalid }
