package scheduler

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/flowgate/flowgate/host/schedule"
)

// JobInput is a job as typed on the command line, one field per flag.
// Empty strings mean the flag was not given.
type JobInput struct {
	Name        string         // --name
	Description string         // --description
	Schedule    schedule.Flags // --cron, --tz, --dst, --every, --at, --stagger, --exact
	Pipeline    string         // --pipeline
	ArgsJSON    string         // --args-json
	Command     string         // --command
	GateTimeout string         // --gate-timeout, a Go duration; for --pipeline
	Session     string         // --session; empty means isolated
	Overlap     string         // --overlap; empty means skip
	// CatchUpWindow is --catchup-window, a Go duration.
	CatchUpWindow        string
	Webhook              string // --webhook
	NotifyCommand        string // --notify-command
	FailureAlertAfter    int    // --failure-alert-after; 0 means none
	FailureAlertCooldown string // --failure-alert-cooldown
	FailureAlertWebhook  string // --failure-alert-webhook
	FailureAlertCommand  string // --failure-alert-command
	DeleteAfterRun       bool   // --delete-after-run
	Disabled             bool   // --disabled

	// AnnounceTo (--announce-to), FailureAlertTo (--failure-alert-to) and
	// NotifyTo (--notify-to) are destination specs, checked by the
	// Destinations of the Jobs that store the job; empty ones are
	// dropped.
	AnnounceTo     []string
	FailureAlertTo []string
	Notify         string // --notify: done_only, state_changes or silent
	NotifyTo       []string
}

// MaxNameLen bounds a job name, in runes.
const MaxNameLen = 100

var sessionName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Validate checks the input as Build does. It returns a *FlagError naming
// the flag and the rule.
func (in JobInput) Validate(now time.Time) error {
	_, err := in.Build(now)
	return err
}

// Build validates the input and returns the job it describes, enabled
// unless Disabled, with no ID, timestamps or state. now resolves a relative
// --at and anchors --every. A relative --pipeline path is kept as given;
// callers make it absolute. Errors are *FlagError values.
func (in JobInput) Build(now time.Time) (Job, error) {
	s, err := schedule.ParseSchedule(in.Schedule, now)
	if err != nil {
		return Job{}, err
	}
	return in.build(s)
}

// build checks everything but the schedule flags, with s already valid.
func (in JobInput) build(s schedule.Schedule) (Job, error) {
	name := strings.TrimSpace(in.Name)
	switch {
	case name == "":
		return Job{}, flagErr("--name", "a name is required")
	case len([]rune(name)) > MaxNameLen:
		return Job{}, flagErr("--name", fmt.Sprintf("is %d characters; at most %d", len([]rune(name)), MaxNameLen))
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return Job{}, flagErr("--name", "must not contain control characters")
	}
	j := Job{Name: name, Description: in.Description, Enabled: !in.Disabled, Schedule: jobSchedule(s), DeleteAfterRun: in.DeleteAfterRun}
	var err error
	if j.Payload, err = in.payload(); err != nil {
		return Job{}, err
	}
	if j.Session, err = parseSession(in.Session); err != nil {
		return Job{}, err
	}
	if j.Overlap, err = schedule.ParseOverlap(in.Overlap); err != nil {
		return Job{}, err
	}
	if in.CatchUpWindow != "" {
		d, err := time.ParseDuration(in.CatchUpWindow)
		if err != nil || d < 0 {
			return Job{}, flagErr("--catchup-window", fmt.Sprintf("%q is not a duration of zero or more; use a form like 30m or 6h", in.CatchUpWindow))
		}
		if s.Kind == schedule.KindAt {
			return Job{}, flagErr("--catchup-window", "applies only to --cron and --every; a one-shot --at job runs once however late")
		}
		j.CatchUpWindow = Duration(d)
	}
	if j.Delivery, err = in.delivery(); err != nil {
		return Job{}, err
	}
	if j.Announce, err = destList("--announce-to", in.AnnounceTo); err != nil {
		return Job{}, err
	}
	if j.FailureAlert, err = in.failureAlert(); err != nil {
		return Job{}, err
	}
	if j.FailureAlert.After > 0 && len(j.FailureAlert.Destinations(j)) == 0 {
		return Job{}, flagErr("--failure-alert-after", "an alert needs somewhere to go: give --failure-alert-to DEST, --failure-alert-webhook URL or --failure-alert-command CMD, or a delivery (--announce-to, --webhook or --notify-command)")
	}
	if j.Notify, j.NotifyTo, err = parseNotify(in.Notify, in.NotifyTo); err != nil {
		return Job{}, err
	}
	if in.DeleteAfterRun && s.Kind != schedule.KindAt {
		return Job{}, flagErr("--delete-after-run", fmt.Sprintf("applies only to one-shot --at jobs, not to --%s", s.Kind))
	}
	return j, nil
}

func (in JobInput) payload() (Payload, error) {
	pipe, cmd := strings.TrimSpace(in.Pipeline), strings.TrimSpace(in.Command)
	switch {
	case pipe != "" && cmd != "":
		return Payload{}, flagErr("--command", "cannot be combined with --pipeline; give exactly one payload")
	case pipe == "" && cmd == "":
		if in.ArgsJSON != "" {
			return Payload{}, flagErr("--args-json", "needs --pipeline: args are for a workflow file")
		}
		return Payload{}, flagErr("--pipeline", "a payload is required: give --pipeline FILE or --command 'CMD'")
	case cmd != "":
		if in.ArgsJSON != "" {
			return Payload{}, flagErr("--args-json", "needs --pipeline: args are for a workflow file, not --command")
		}
		if in.GateTimeout != "" {
			return Payload{}, flagErr("--gate-timeout", "needs --pipeline: a command has no gates")
		}
		return Payload{Kind: PayloadCommand, Command: cmd}, nil
	}
	p := Payload{Kind: PayloadPipeline, Pipeline: pipe}
	if in.GateTimeout != "" {
		d, err := ParseGateTimeout(in.GateTimeout)
		if err != nil {
			return Payload{}, flagErr("--gate-timeout", err.Error())
		}
		p.GateTimeout = Duration(d)
	}
	if in.ArgsJSON != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(in.ArgsJSON), &m); err != nil || m == nil {
			return Payload{}, flagErr("--args-json", `must be a JSON object, such as {"env":"prod"}`)
		}
		compact, _ := json.Marshal(m)
		p.Args = compact
	}
	return p, nil
}

func parseSession(v string) (string, error) {
	if v == "" || v == SessionIsolated {
		return SessionIsolated, nil
	}
	if name, ok := strings.CutPrefix(v, "session:"); ok && sessionName.MatchString(name) {
		return v, nil
	}
	return "", flagErr("--session", fmt.Sprintf("%q is not a session; use isolated or session:NAME (NAME: letters, digits, '.', '_' or '-', at most 64)", v))
}

func (in JobInput) delivery() (Delivery, error) {
	return parseDelivery(in.Webhook, in.NotifyCommand, "--webhook", "--notify-command")
}

// parseDelivery reads a webhook URL or a command line given with the
// flags named, at most one of them.
func parseDelivery(hook, cmd, hookFlag, cmdFlag string) (Delivery, error) {
	hook, cmd = strings.TrimSpace(hook), strings.TrimSpace(cmd)
	switch {
	case hook != "" && cmd != "":
		return Delivery{}, flagErr(cmdFlag, fmt.Sprintf("cannot be combined with %s; give at most one", hookFlag))
	case cmd != "":
		return Delivery{Kind: DeliveryCommand, Command: cmd}, nil
	case hook == "":
		return Delivery{Kind: DeliveryNone}, nil
	}
	u, err := url.Parse(hook)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Delivery{}, flagErr(hookFlag, fmt.Sprintf("%q is not an http or https URL", hook))
	}
	return Delivery{Kind: DeliveryWebhook, URL: hook}, nil
}

func (in JobInput) failureAlert() (FailureAlert, error) {
	if in.FailureAlertAfter < 0 {
		return FailureAlert{}, flagErr("--failure-alert-after", fmt.Sprintf("must be 0 (no alerts) or more, got %d", in.FailureAlertAfter))
	}
	to, err := parseDelivery(in.FailureAlertWebhook, in.FailureAlertCommand, "--failure-alert-webhook", "--failure-alert-command")
	if err != nil {
		return FailureAlert{}, err
	}
	dests, err := destList("--failure-alert-to", in.FailureAlertTo)
	if err != nil {
		return FailureAlert{}, err
	}
	if in.FailureAlertAfter == 0 {
		switch {
		case len(dests) > 0:
			return FailureAlert{}, flagErr("--failure-alert-to", "needs --failure-alert-after N (N ≥ 1)")
		case in.FailureAlertCooldown != "":
			return FailureAlert{}, flagErr("--failure-alert-cooldown", "needs --failure-alert-after N (N ≥ 1)")
		case to.Kind == DeliveryWebhook:
			return FailureAlert{}, flagErr("--failure-alert-webhook", "needs --failure-alert-after N (N ≥ 1)")
		case to.Kind == DeliveryCommand:
			return FailureAlert{}, flagErr("--failure-alert-command", "needs --failure-alert-after N (N ≥ 1)")
		}
		return FailureAlert{}, nil
	}
	a := FailureAlert{After: in.FailureAlertAfter, Cooldown: Duration(schedule.DefaultAlertCooldown), Dests: dests}
	if to.Kind != DeliveryNone {
		a.To = &to
	}
	if in.FailureAlertCooldown != "" {
		d, err := time.ParseDuration(in.FailureAlertCooldown)
		if err != nil || d < 0 {
			return FailureAlert{}, flagErr("--failure-alert-cooldown", fmt.Sprintf("%q is not a duration of zero or more; use a form like 30m or 1h", in.FailureAlertCooldown))
		}
		a.Cooldown = Duration(d)
	}
	return a, nil
}

// input returns the JobInput that describes j, for Edit to patch. The
// schedule flags are omitted: Edit keeps the schedule unless they change.
func (j Job) input() JobInput {
	in := JobInput{
		Name: j.Name, Description: j.Description, Pipeline: j.Payload.Pipeline, Command: j.Payload.Command,
		Session: j.Session, Overlap: string(j.Overlap), FailureAlertAfter: j.FailureAlert.After,
		DeleteAfterRun: j.DeleteAfterRun, Disabled: !j.Enabled,
		AnnounceTo: j.Announce, FailureAlertTo: j.FailureAlert.Dests, Notify: j.Notify, NotifyTo: j.NotifyTo,
	}
	if j.Payload.Args != nil {
		in.ArgsJSON = string(j.Payload.Args)
	}
	if j.Payload.GateTimeout != 0 {
		in.GateTimeout = time.Duration(j.Payload.GateTimeout).String()
	}
	if j.CatchUpWindow != 0 {
		in.CatchUpWindow = time.Duration(j.CatchUpWindow).String()
	}
	switch j.Delivery.Kind {
	case DeliveryWebhook:
		in.Webhook = j.Delivery.URL
	case DeliveryCommand:
		in.NotifyCommand = j.Delivery.Command
	}
	if j.FailureAlert.After > 0 {
		in.FailureAlertCooldown = time.Duration(j.FailureAlert.Cooldown).String()
	}
	if to := j.FailureAlert.To; to != nil {
		switch to.Kind {
		case DeliveryWebhook:
			in.FailureAlertWebhook = to.URL
		case DeliveryCommand:
			in.FailureAlertCommand = to.Command
		}
	}
	return in
}

// ParseGateTimeout reads a --gate-timeout: a Go duration of at least a
// second. The error says what is wrong, for the caller to name its flag.
func ParseGateTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second {
		return 0, fmt.Errorf("%q is not a duration of 1s or more; use a form like 30m or 24h", v)
	}
	return d, nil
}

// flagErr is a *schedule.FlagError: the flag at fault and the rule broken.
func flagErr(flag, rule string) error { return &schedule.FlagError{Flag: flag, Rule: rule} }
