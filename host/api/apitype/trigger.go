package apitype

import "time"

// The targets of a trigger: a workflow file, or a controller's managed
// flow.
const (
	TargetPipeline   = "pipeline"
	TargetController = "controller"
)

// TriggerToggle is one enabling or disabling of a trigger: the state it
// set, who set it and when.
type TriggerToggle struct {
	Enabled bool      `json:"enabled"`
	By      string    `json:"by,omitempty"`
	At      time.Time `json:"at"`
}

// Trigger is a webhook trigger as stored. Target is TargetPipeline (with
// Pipeline, an absolute path) or TargetController (with Controller);
// SecretEnv and TokenEnv name the gateway's variables that hold its HMAC
// secret and bearer token, never their values.
type Trigger struct {
	Name       string         `json:"name"`
	Enabled    bool           `json:"enabled"`
	Target     string         `json:"target"`
	Pipeline   string         `json:"pipeline,omitempty"`
	Controller string         `json:"controller,omitempty"`
	ArgsFrom   string         `json:"args_from"`
	SecretEnv  string         `json:"secret_env,omitempty"`
	TokenEnv   string         `json:"token_env,omitempty"`
	MaxBody    int64          `json:"max_body"`
	Rate       float64        `json:"rate"`
	Burst      int            `json:"burst"`
	CreatedAt  time.Time      `json:"created_at"`
	UpdatedAt  time.Time      `json:"updated_at"`
	LastToggle *TriggerToggle `json:"last_toggle,omitempty"`
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

// TriggerInput is what `triggers add` gives (AddTrigger); zero limits
// take the defaults.
type TriggerInput struct {
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

// TriggerRun is one delivery a trigger accepted and the flow it started.
type TriggerRun struct {
	Trigger  string    `json:"trigger"`
	Delivery string    `json:"delivery"`
	FlowID   string    `json:"flow_id"`
	At       time.Time `json:"at"`
}
