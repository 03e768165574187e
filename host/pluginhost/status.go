package pluginhost

import (
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// State is where a plugin instance is in its life.
type State string

// Plugin states.
const (
	StateStarting State = "starting"
	StateRunning  State = "running"
	StateBackoff  State = "backoff" // crashed or failed to start; restarting after a delay
	StateFailed   State = "failed"  // gave up: restart budget spent, or a permanent error
	StateStopped  State = "stopped"
)

// Status describes one plugin for `flowgate plugins list`.
type Status struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	State   State  `json:"state"`
	PID     int    `json:"pid,omitempty"`
	// InProcess is set for a controller that runs inside the gateway's
	// process (PID is the gateway's): it has no process of its own to
	// restart or reload.
	InProcess bool      `json:"in_process,omitempty"`
	Restarts  int       `json:"restarts"`
	Epoch     int64     `json:"epoch"`
	LastError string    `json:"last_error,omitempty"`
	Since     time.Time `json:"since"`
	Pending   int       `json:"pending_events"`
	// Stages are the pipeline stages the plugin declared when it last
	// started.
	Stages []sdk.Stage `json:"stages,omitempty"`
	// Watch is how the running process's Watch is: "running", "ended"
	// (it returned OK), or empty when the plugin declares no Watch or
	// no process runs.
	Watch string `json:"watch,omitempty"`
	// Exit and Stderr say how the process of the last failed start
	// (LastError) ended: its exit status ("exit status 3"; empty when it
	// never ran) and the last lines it wrote to stderr, at most
	// StderrLines. Empty when LastError is not a failed start.
	Exit   string   `json:"exit,omitempty"`
	Stderr []string `json:"stderr,omitempty"`
}
