package apitype

import (
	"encoding/json"
	"time"
)

// The words of the Cron calls: a job as stored (CronJob), a new one as
// its flags give it (CronJobInput), a change to one (CronJobPatch). They
// have the fields of package scheduler's Job, JobInput and JobPatch.

// Duration is a time.Duration that reads and writes JSON as Go duration
// text ("1h30m0s"), as a stored job keeps it.
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

// ScheduleKind says which schedule flag a job was given.
type ScheduleKind string

// The schedule kinds, one per CLI flag.
const (
	ScheduleCron  ScheduleKind = "cron"
	ScheduleEvery ScheduleKind = "every"
	ScheduleAt    ScheduleKind = "at"
)

// DSTPolicy is what a cron schedule does with a wall-clock time a
// spring-forward transition skips; the zero value means DSTShift.
type DSTPolicy string

// The DST policies.
const (
	DSTShift DSTPolicy = "shift"
	DSTSkip  DSTPolicy = "skip"
)

// Overlap is what a job does with a run that comes due while another
// runs; the zero value means OverlapSkip.
type Overlap string

// The overlap policies.
const (
	OverlapSkip        Overlap = "skip"
	OverlapBufferOne   Overlap = "buffer_one"
	OverlapBufferAll   Overlap = "buffer_all"
	OverlapCancelOther Overlap = "cancel_other"
	OverlapAllowAll    Overlap = "allow_all"
)

// CronSchedule is a job's schedule as stored. Stagger is the --stagger
// window as given (zero: the default for a top-of-hour schedule) and
// Exact is --exact.
type CronSchedule struct {
	Kind    ScheduleKind `json:"kind"`
	Expr    string       `json:"expr,omitempty"`
	TZ      string       `json:"tz,omitempty"`
	DST     DSTPolicy    `json:"dst,omitempty"`
	Every   Duration     `json:"every,omitempty"`
	Anchor  time.Time    `json:"anchor,omitzero"`
	At      time.Time    `json:"at,omitzero"`
	Stagger Duration     `json:"stagger,omitempty"`
	Exact   bool         `json:"exact,omitempty"`
}

// CronPayloadKind says what a job runs.
type CronPayloadKind string

// The payload kinds, one per CLI flag.
const (
	PayloadPipeline CronPayloadKind = "pipeline"
	PayloadCommand  CronPayloadKind = "command"
)

// CronPayload is what a job runs when it fires: a workflow file (an
// absolute path) with its args, or a command line. GateTimeout is how
// long a run's gate may wait unanswered; zero waits for ever.
type CronPayload struct {
	Kind        CronPayloadKind `json:"kind"`
	Pipeline    string          `json:"pipeline,omitempty"`
	Args        json.RawMessage `json:"args,omitempty"`
	Command     string          `json:"command,omitempty"`
	GateTimeout Duration        `json:"gate_timeout,omitempty"`
}

// CronDeliveryKind says where a job's result goes; the zero value means
// DeliveryNone.
type CronDeliveryKind string

// The delivery kinds. DeliveryDest sends to a destination spec
// (--announce-to, --failure-alert-to).
const (
	DeliveryNone    CronDeliveryKind = "none"
	DeliveryWebhook CronDeliveryKind = "webhook"
	DeliveryCommand CronDeliveryKind = "command"
	DeliveryDest    CronDeliveryKind = "dest"
)

// CronDelivery is where a job's result (and its failure alerts) go.
type CronDelivery struct {
	Kind    CronDeliveryKind `json:"kind"`
	URL     string           `json:"url,omitempty"`
	Command string           `json:"command,omitempty"`
	Dest    string           `json:"dest,omitempty"`
}

// CronFailureAlert says when consecutive failures raise an alert (After
// zero: never) and where it goes: To and Dests, or else where the job's
// results go.
type CronFailureAlert struct {
	After    int           `json:"after,omitempty"`
	Cooldown Duration      `json:"cooldown,omitempty"`
	To       *CronDelivery `json:"to,omitempty"`
	Dests    []string      `json:"dests,omitempty"`
}

// Destinations is where an alert of job j goes: its own To and Dests if
// it has any, else j's Delivery and Announce; empty when nowhere.
func (a CronFailureAlert) Destinations(j CronJob) []CronDelivery {
	var out []CronDelivery
	if a.To == nil && len(a.Dests) == 0 {
		if j.Delivery.Kind != DeliveryNone && j.Delivery.Kind != "" {
			out = append(out, j.Delivery)
		}
		return append(out, destDeliveries(j.Announce)...)
	}
	if a.To != nil && a.To.Kind != DeliveryNone {
		out = append(out, *a.To)
	}
	return append(out, destDeliveries(a.Dests)...)
}

func destDeliveries(specs []string) []CronDelivery {
	out := make([]CronDelivery, 0, len(specs))
	for _, d := range specs {
		out = append(out, CronDelivery{Kind: DeliveryDest, Dest: d})
	}
	return out
}

// CronJobState is the runtime state the scheduler keeps for a job.
// NextRun is zero when the job is disabled or will not fire again.
type CronJobState struct {
	NextRun           time.Time `json:"next_run,omitzero"`
	LastRun           time.Time `json:"last_run,omitzero"`
	LastStatus        string    `json:"last_status,omitempty"`
	LastError         string    `json:"last_error,omitempty"`
	ConsecutiveErrors int       `json:"consecutive_errors,omitempty"`
	LastAlertAt       time.Time `json:"last_alert_at,omitzero"`
	LastDelivery      string    `json:"last_delivery,omitempty"`
	LastDeliveryError string    `json:"last_delivery_error,omitempty"`
}

// CronToggle is one enabling or disabling of a job: the state it set, who
// set it (empty when cron edit --disabled did) and when.
type CronToggle struct {
	Enabled bool      `json:"enabled"`
	By      string    `json:"by,omitempty"`
	At      time.Time `json:"at"`
}

// CronJob is a scheduled job as stored. Session is "isolated" or
// "session:NAME"; LastToggle is nil for a job never enabled or disabled
// since it was added.
type CronJob struct {
	ID             string           `json:"id"`
	Name           string           `json:"name"`
	Description    string           `json:"description,omitempty"`
	Enabled        bool             `json:"enabled"`
	Schedule       CronSchedule     `json:"schedule"`
	Payload        CronPayload      `json:"payload"`
	Session        string           `json:"session"`
	Overlap        Overlap          `json:"overlap"`
	CatchUpWindow  Duration         `json:"catchup_window,omitempty"`
	Delivery       CronDelivery     `json:"delivery"`
	FailureAlert   CronFailureAlert `json:"failure_alert,omitzero"`
	DeleteAfterRun bool             `json:"delete_after_run,omitempty"`
	CreatedAt      time.Time        `json:"created_at"`
	UpdatedAt      time.Time        `json:"updated_at"`
	State          CronJobState     `json:"state"`
	Announce       []string         `json:"announce,omitempty"`
	Notify         string           `json:"notify,omitempty"`
	NotifyTo       []string         `json:"notify_to,omitempty"`
	LastToggle     *CronToggle      `json:"last_toggle,omitempty"`
}
