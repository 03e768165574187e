package scheduler

import (
	"encoding/json"
	"time"

	"github.com/flowgate/flowgate/host/schedule"
)

// Duration is a time.Duration that reads and writes JSON as Go duration
// text ("1h30m0s"), so stored jobs stay readable.
type Duration time.Duration

// MarshalText writes the duration as time.Duration.String does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads Go duration text; it fails on anything else.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// JobSchedule is the stored form of a job's Schedule.
type JobSchedule struct {
	Kind   schedule.Kind      `json:"kind"`
	Expr   string             `json:"expr,omitempty"`
	TZ     string             `json:"tz,omitempty"`
	DST    schedule.DSTPolicy `json:"dst,omitempty"`
	Every  Duration           `json:"every,omitempty"`
	Anchor time.Time          `json:"anchor,omitzero"`
	At     time.Time          `json:"at,omitzero"`
	// Stagger is the --stagger window as given (zero: the default for a
	// top-of-hour schedule) and Exact is --exact; the offset within the
	// window is not stored, it follows from the job's id.
	Stagger Duration `json:"stagger,omitempty"`
	Exact   bool     `json:"exact,omitempty"`
}

// Schedule returns the Schedule the stored form describes, with no
// stagger key: Job.FireSchedule is the one the job fires on.
func (s JobSchedule) Schedule() schedule.Schedule {
	return schedule.Schedule{Kind: s.Kind, Expr: s.Expr, TZ: s.TZ, DST: s.DST, Every: time.Duration(s.Every), Anchor: s.Anchor, At: s.At,
		Stagger: time.Duration(s.Stagger), Exact: s.Exact}
}

func jobSchedule(s schedule.Schedule) JobSchedule {
	return JobSchedule{Kind: s.Kind, Expr: s.Expr, TZ: s.TZ, DST: s.DST, Every: Duration(s.Every), Anchor: s.Anchor, At: s.At,
		Stagger: Duration(s.Stagger), Exact: s.Exact}
}

// FireSchedule is the schedule j fires on: its stored schedule, staggered
// by the offset its id picks, so next runs, catch-up and backfill all see
// the same times on every gateway.
func (j Job) FireSchedule() schedule.Schedule {
	s := j.Schedule.Schedule()
	s.StaggerKey = j.ID
	return s
}

// PayloadKind says what a job runs.
type PayloadKind string

// The payload kinds, one per CLI flag.
const (
	// PayloadPipeline runs a workflow file (--pipeline) with args.
	PayloadPipeline PayloadKind = "pipeline"
	// PayloadCommand runs a command line (--command).
	PayloadCommand PayloadKind = "command"
)

// Payload is what a job runs when it fires.
type Payload struct {
	Kind PayloadKind `json:"kind"`
	// Pipeline is the workflow file, as an absolute path.
	Pipeline string `json:"pipeline,omitempty"`
	// Args is the JSON object of workflow args (--args-json); nil means the
	// file's defaults.
	Args json.RawMessage `json:"args,omitempty"`
	// Command is the command line for PayloadCommand.
	Command string `json:"command,omitempty"`
	// GateTimeout (--gate-timeout), for PayloadPipeline, is how long a
	// run's gate may wait unanswered before the gateway denies it as
	// gate-expired; zero waits for ever.
	GateTimeout Duration `json:"gate_timeout,omitempty"`
}

// DeliveryKind says where a job's result goes.
type DeliveryKind string

// The delivery kinds. The zero value means DeliveryNone.
const (
	DeliveryNone    DeliveryKind = "none"
	DeliveryWebhook DeliveryKind = "webhook"
	DeliveryCommand DeliveryKind = "command"
	// DeliveryDest sends to a destination spec (--announce-to,
	// --failure-alert-to): a name from the gateway's notify config, a chat
	// or mail URL, an http(s) URL or "cmd:COMMAND" (see Destinations).
	DeliveryDest DeliveryKind = "dest"
)

// Delivery is where a job's result (and its failure alerts) go.
type Delivery struct {
	Kind DeliveryKind `json:"kind"`
	// URL is the http or https address a DeliveryWebhook posts to.
	URL string `json:"url,omitempty"`
	// Command is the command line a DeliveryCommand runs.
	Command string `json:"command,omitempty"`
	// Dest is the destination spec a DeliveryDest sends to, as given:
	// its ${VAR} secrets stay unexpanded until it is sent.
	Dest string `json:"dest,omitempty"`
}

// FailureAlert says when consecutive failures raise an alert, and where it
// goes: To and Dests, or else where the job's results go. After zero
// means no alerts.
type FailureAlert struct {
	After    int      `json:"after,omitempty"`
	Cooldown Duration `json:"cooldown,omitempty"`
	// To is the failure webhook or command; nil with no Dests sends
	// alerts where the job's results go.
	To *Delivery `json:"to,omitempty"`
	// Dests are the destinations of --failure-alert-to.
	Dests []string `json:"dests,omitempty"`
}

// Destinations is where an alert of job j goes: its own To and Dests if
// it has any, else j's Delivery and Announce. It is empty when the alert
// has nowhere to go.
func (a FailureAlert) Destinations(j Job) []Delivery {
	if a.To == nil && len(a.Dests) == 0 {
		return j.resultDestinations()
	}
	var out []Delivery
	if a.To != nil && a.To.Kind != DeliveryNone {
		out = append(out, *a.To)
	}
	return append(out, destDeliveries(a.Dests)...)
}

// resultDestinations is where each run's result goes: the job's Delivery
// (when it has one), then each --announce-to destination.
func (j Job) resultDestinations() []Delivery {
	var out []Delivery
	if j.Delivery.Kind != DeliveryNone && j.Delivery.Kind != "" {
		out = append(out, j.Delivery)
	}
	return append(out, destDeliveries(j.Announce)...)
}

func destDeliveries(specs []string) []Delivery {
	out := make([]Delivery, 0, len(specs))
	for _, d := range specs {
		out = append(out, Delivery{Kind: DeliveryDest, Dest: d})
	}
	return out
}

// JobState is the runtime state the scheduler keeps for a job. NextRun is
// zero when the job is disabled or will not fire again.
type JobState struct {
	NextRun           time.Time `json:"next_run,omitzero"`
	LastRun           time.Time `json:"last_run,omitzero"`
	LastStatus        string    `json:"last_status,omitempty"`
	LastError         string    `json:"last_error,omitempty"`
	ConsecutiveErrors int       `json:"consecutive_errors,omitempty"`
	LastAlertAt       time.Time `json:"last_alert_at,omitzero"`
	// LastDelivery is how the last result delivery ended (delivered or
	// failed), with its error.
	LastDelivery      string `json:"last_delivery,omitempty"`
	LastDeliveryError string `json:"last_delivery_error,omitempty"`
}

// SessionIsolated runs each firing in a fresh session; "session:NAME"
// shares the named one.
const SessionIsolated = "isolated"

// Job is a scheduled job as stored.
type Job struct {
	ID          string      `json:"id"`
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	Enabled     bool        `json:"enabled"`
	Schedule    JobSchedule `json:"schedule"`
	Payload     Payload     `json:"payload"`
	// Session is SessionIsolated or "session:NAME".
	Session string           `json:"session"`
	Overlap schedule.Overlap `json:"overlap"`
	// CatchUpWindow is PlanCatchUp's window; zero runs only the latest
	// missed time.
	CatchUpWindow  Duration     `json:"catchup_window,omitempty"`
	Delivery       Delivery     `json:"delivery"`
	FailureAlert   FailureAlert `json:"failure_alert,omitzero"`
	DeleteAfterRun bool         `json:"delete_after_run,omitempty"`
	CreatedAt      time.Time    `json:"created_at"`
	UpdatedAt      time.Time    `json:"updated_at"`
	State          JobState     `json:"state"`

	// Announce lists the destinations (--announce-to) each run's result
	// is posted to, besides Delivery: a chat or mail destination gets the
	// result as text, an http(s) or cmd: one the Report as JSON.
	Announce []string `json:"announce,omitempty"`
	// Notify is the notify policy (--notify) of the flows the job's runs
	// make, with NotifyTo its destinations; empty Notify leaves the
	// engine's default.
	Notify   string   `json:"notify,omitempty"`
	NotifyTo []string `json:"notify_to,omitempty"`

	// LastToggle is who last enabled or disabled the job, and when; nil
	// for a job whose state has not changed since it was added (and for
	// records stored before it was kept).
	LastToggle *Toggle `json:"last_toggle,omitempty"`
}

// The Toggle.By of changes no person made: ByScheduler for a job the
// scheduler disabled itself, after too many consecutive failures;
// ByConfig for a job the gateway config declares enabled or disabled,
// set so when the gateway starts.
const (
	ByScheduler = "scheduler"
	ByConfig    = "config"
)

// Toggle is one enabling or disabling of a job. A job's runs record who
// ran it; this records who stopped or restarted it, which no run shows.
type Toggle struct {
	// Enabled is the state the change set.
	Enabled bool `json:"enabled"`
	// By names who made the change: the --by of cron enable or disable
	// (else the OS user), a run center token's name, ByScheduler or
	// ByConfig.
	// Empty when cron edit --disabled made it.
	By string    `json:"by,omitempty"`
	At time.Time `json:"at"`
}
