package api

import (
	"context"
	"time"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Client is what the CLI uses to read and change records. Local serves it
// from the store in this process; a gateway serves the same calls over its
// socket. Errors keep the sdk sentinels (errors.Is works on both).
type Client interface {
	ListTasks(ctx context.Context, f apitype.TaskFilter) (apitype.TaskPage, error)
	// ResolveTask finds a task by id, else by idempotency key.
	ResolveTask(ctx context.Context, token string) (*stored.Task, error)
	CancelTask(ctx context.Context, id string) (*stored.Task, error)

	ViewFlows(ctx context.Context, f apitype.FlowFilter) (apitype.FlowViewPage, error)
	CountFlows(ctx context.Context) (apitype.FlowCounts, error)
	// ViewFlow finds a flow by id, else the newest flow of an owner key.
	ViewFlow(ctx context.Context, token string) (apitype.FlowView, error)
	CreateFlow(ctx context.Context, in apitype.CreateFlowInput) (*sdk.Flow, error)
	UpdateFlow(ctx context.Context, id string, expected int64, p apitype.FlowPatch) (*sdk.Flow, error)
	// CancelFlow cancels flow id and its active tasks; by names who asked
	// (empty: engine.CancelByOperator) in the flow's history.
	CancelFlow(ctx context.Context, id, by string) (apitype.CancelResult, error)

	// RunTask records a task for the runner to start: queued, and
	// dispatched by the gateway in FIFO order under its admission cap.
	// created is false when the idempotency key named an existing task.
	RunTask(ctx context.Context, in apitype.CreateTaskInput) (task *stored.Task, created bool, err error)
	// Status describes the gateway serving this client, or, for a Local
	// client, reports Running false with the record counts.
	Status(ctx context.Context) (GatewayStatus, error)
	// Plugins describes the controller plugins of the running gateway;
	// a Local client (no gateway) returns ErrNoGateway.
	Plugins(ctx context.Context) ([]apitype.PluginStatus, error)
	PluginReloader

	Gatekeeper
	Continuer
	Retrier
	Historian
	Keeper
	Sessioner
	Cron
	Triggers
	Storage
	Auditor
	Maintainer

	// Close releases what the client holds (the store, or the connection).
	Close() error
}

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
	// apitype.WriteHealth); nil when no gateway runs.
	Store *apitype.WriteHealth `json:"store,omitempty"`
	// TaskFiles says whether the running gateway could write the files of
	// the last task attempt it started (they live under the home, which
	// may be on another disk than the store); nil when no gateway runs.
	TaskFiles *apitype.WriteHealth `json:"task_files,omitempty"`
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
