package apitype

import (
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// GatewayStatus is what `flowgate gateway status` prints.
type GatewayStatus struct {
	// Running is true when a gateway serves the home.
	Running bool      `json:"running"`
	PID     int       `json:"pid,omitempty"`
	Home    string    `json:"home"`
	Started time.Time `json:"started,omitzero"`
	// Uptime is in seconds.
	Uptime float64 `json:"uptime_seconds,omitempty"`
	// Tasks counts tasks by status; Flows counts flows by status.
	Tasks map[sdk.TaskStatus]int `json:"tasks"`
	Flows map[sdk.FlowStatus]int `json:"flows"`
	// MaxRunning is the admission cap on running tasks.
	MaxRunning int `json:"max_running,omitempty"`
	// Store says whether the running gateway's store takes writes (see
	// WriteHealth); nil when no gateway runs.
	Store *WriteHealth `json:"store,omitempty"`
	// TaskFiles says whether the running gateway could write the files of
	// the last task attempt it started (they live under the home, which
	// may be on another disk than the store); nil when no gateway runs.
	TaskFiles *WriteHealth `json:"task_files,omitempty"`
	// HTTPAddr is the address the gateway's TCP listener (the run
	// center, /metrics) serves on; empty when it has none. HTTPTLS is
	// true when it serves HTTPS.
	HTTPAddr string `json:"http_addr,omitempty"`
	HTTPTLS  bool   `json:"http_tls,omitempty"`
}

// HTTPURL is the run center's URL, or "" when the gateway serves none.
func (s GatewayStatus) HTTPURL() string {
	switch {
	case s.HTTPAddr == "":
		return ""
	case s.HTTPTLS:
		return "https://" + s.HTTPAddr + "/"
	}
	return "http://" + s.HTTPAddr + "/"
}

// Problem is why the gateway cannot record or start work ("store not
// writable: disk full; …"), or "" when it can or no gateway runs.
func (s GatewayStatus) Problem() string {
	switch {
	case s.Store != nil && !s.Store.Writable:
		return s.Store.Problem("store")
	case s.TaskFiles != nil && !s.TaskFiles.Writable:
		return s.TaskFiles.Problem("task files")
	}
	return ""
}

// Readiness is the answer of /readyz: whether the gateway can do its work
// now and, when not, why.
type Readiness struct {
	// Ready is true when the gateway can record work.
	Ready bool `json:"ready"`
	// Problem says why it cannot ("store not writable: disk full; …");
	// empty when Ready.
	Problem string `json:"problem,omitempty"`
	// Store is the state of the store's writes, when the client knows it.
	Store *WriteHealth `json:"store,omitempty"`
	// TaskFiles is the state of the writes of task files, when the
	// client knows it.
	TaskFiles *WriteHealth `json:"task_files,omitempty"`
}
