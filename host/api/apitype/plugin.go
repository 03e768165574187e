package apitype

import (
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// PluginState is where a controller plugin is in its life.
type PluginState string

// The plugin states: backoff is a crashed or failed plugin waiting to
// restart, failed one that was given up on.
const (
	PluginStarting PluginState = "starting"
	PluginRunning  PluginState = "running"
	PluginBackoff  PluginState = "backoff"
	PluginFailed   PluginState = "failed"
	PluginStopped  PluginState = "stopped"
)

// PluginStatus describes one controller plugin of a running gateway
// (`flowgate plugins list`). InProcess is set for a controller that runs
// inside the gateway's process (PID is the gateway's). Watch is
// "running", "ended" or empty. Exit and Stderr say how the process of the
// last failed start ended.
type PluginStatus struct {
	Name      string      `json:"name"`
	Version   string      `json:"version,omitempty"`
	State     PluginState `json:"state"`
	PID       int         `json:"pid,omitempty"`
	InProcess bool        `json:"in_process,omitempty"`
	Restarts  int         `json:"restarts"`
	Epoch     int64       `json:"epoch"`
	LastError string      `json:"last_error,omitempty"`
	Since     time.Time   `json:"since"`
	Pending   int         `json:"pending_events"`
	Stages    []sdk.Stage `json:"stages,omitempty"`
	Watch     string      `json:"watch,omitempty"`
	Exit      string      `json:"exit,omitempty"`
	Stderr    []string    `json:"stderr,omitempty"`
}
