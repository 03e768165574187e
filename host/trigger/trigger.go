package trigger

import (
	"fmt"
	"regexp"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// Target kinds: what a delivery starts.
const (
	// TargetPipeline runs a workflow file with the delivery as its args.
	TargetPipeline = "pipeline"
	// TargetController creates a managed flow of a controller with the
	// delivery as its state.
	TargetController = "controller"
)

// Where a delivery's input is read from (--args-from).
const (
	ArgsFromBody  = "body"
	ArgsFromQuery = "query"
)

// Defaults for a trigger's limits.
const (
	// DefaultMaxBody bounds a delivery's body: 1 MiB holds common webhook
	// payloads and is small enough to hold in memory; a trigger that
	// takes large pushes raises it with --max-body.
	DefaultMaxBody = 1 << 20
	// DefaultRate is the deliveries per second a trigger accepts over
	// time, and DefaultBurst how many may arrive at once.
	DefaultRate  = 10.0
	DefaultBurst = 20
)

// Trigger is a webhook trigger as stored.
type Trigger struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
	// Target is TargetPipeline or TargetController.
	Target string `json:"target"`
	// Pipeline is the workflow file's absolute path, for TargetPipeline.
	Pipeline string `json:"pipeline,omitempty"`
	// Controller is the controller id, for TargetController.
	Controller string `json:"controller,omitempty"`
	// ArgsFrom is ArgsFromBody or ArgsFromQuery.
	ArgsFrom string `json:"args_from"`
	// SecretEnv names the gateway's environment variable holding the HMAC
	// secret GitHub signs with; TokenEnv the one holding the bearer
	// token. At least one is set; the values are never stored.
	SecretEnv string `json:"secret_env,omitempty"`
	TokenEnv  string `json:"token_env,omitempty"`
	// MaxBody is the largest body accepted, in bytes (413 above).
	MaxBody int64 `json:"max_body"`
	// Rate and Burst are the token bucket of deliveries (429 when empty).
	Rate      float64   `json:"rate"`
	Burst     int       `json:"burst"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// LastToggle is who last enabled or disabled the trigger, and when;
	// nil for one whose state has not changed since it was added (and for
	// records stored before it was kept).
	LastToggle *Toggle `json:"last_toggle,omitempty"`
}

// Toggle is one enabling or disabling of a trigger. The deliveries it
// accepted show what it started; this shows who stopped or restarted it.
type Toggle struct {
	// Enabled is the state the change set.
	Enabled bool `json:"enabled"`
	// By names who made the change: the --by of triggers enable or
	// disable (else the OS user), or a run center token's name.
	By string    `json:"by,omitempty"`
	At time.Time `json:"at"`
}

// Input is what `triggers add` gives; zero limits take the defaults.
type Input struct {
	Name       string  `json:"name"`
	Pipeline   string  `json:"pipeline,omitempty"`
	Controller string  `json:"controller,omitempty"`
	ArgsFrom   string  `json:"args_from,omitempty"`
	SecretEnv  string  `json:"secret_env,omitempty"`
	TokenEnv   string  `json:"token_env,omitempty"`
	MaxBody    int64   `json:"max_body,omitempty"`
	Rate       float64 `json:"rate,omitempty"`
	Burst      int     `json:"burst,omitempty"`
	Disabled   bool    `json:"disabled,omitempty"`
}

// nameRE is what a trigger name may hold: it is a path segment of the
// hook's URL, so it stays plain.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// envRE is a portable environment variable name.
var envRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{sdk.ErrInvalid}, a...)...)
}

// Build validates in and returns the trigger it describes, stamped now.
func (in Input) Build(now time.Time) (Trigger, error) {
	t := Trigger{Name: in.Name, Enabled: !in.Disabled, Pipeline: in.Pipeline, Controller: in.Controller,
		ArgsFrom: in.ArgsFrom, SecretEnv: in.SecretEnv, TokenEnv: in.TokenEnv,
		MaxBody: in.MaxBody, Rate: in.Rate, Burst: in.Burst, CreatedAt: now.UTC(), UpdatedAt: now.UTC()}
	if !nameRE.MatchString(t.Name) {
		return Trigger{}, invalid("trigger name %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit (it is the path of POST /hooks/NAME)", t.Name)
	}
	switch {
	case t.Pipeline != "" && t.Controller != "":
		return Trigger{}, invalid("give --pipeline FILE or --controller ID, not both")
	case t.Pipeline != "":
		t.Target = TargetPipeline
	case t.Controller != "":
		t.Target = TargetController
	default:
		return Trigger{}, invalid("say what a delivery starts: --pipeline FILE or --controller ID")
	}
	switch t.ArgsFrom {
	case "":
		t.ArgsFrom = ArgsFromBody
	case ArgsFromBody, ArgsFromQuery:
	default:
		return Trigger{}, invalid("--args-from %q: use body or query", t.ArgsFrom)
	}
	if t.SecretEnv == "" && t.TokenEnv == "" {
		return Trigger{}, invalid("a trigger needs --secret-env VAR (GitHub's HMAC signature) or --token-env VAR (a bearer token), or both; without one anyone could start work")
	}
	for flag, v := range map[string]string{"--secret-env": t.SecretEnv, "--token-env": t.TokenEnv} {
		if v != "" && !envRE.MatchString(v) {
			return Trigger{}, invalid("%s %q is not an environment variable name (letters, digits and '_', not starting with a digit); give the variable's name, not its value", flag, v)
		}
	}
	if t.MaxBody == 0 {
		t.MaxBody = DefaultMaxBody
	}
	if t.Rate == 0 {
		t.Rate = DefaultRate
	}
	if t.Burst == 0 {
		t.Burst = DefaultBurst
	}
	if t.MaxBody < 0 || t.Rate < 0 || t.Burst < 0 {
		return Trigger{}, invalid("--max-body, --rate and --burst must be positive (or zero for the default)")
	}
	return t, nil
}

// Missing names the variables of t that getenv finds empty; a gateway
// whose environment lacks them refuses every delivery.
func (t Trigger) Missing(getenv func(string) string) []string {
	var out []string
	for _, v := range []string{t.SecretEnv, t.TokenEnv} {
		if v != "" && getenv(v) == "" {
			out = append(out, v)
		}
	}
	return out
}
