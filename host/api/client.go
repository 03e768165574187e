package api

import (
	"context"

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
	// dispatched by the gateway in FIFO order under its admission cap,
	// or, when a slot is free and no task waits, already running (the
	// gateway starts it in the commit that creates it).
	// created is false when the idempotency key named an existing task.
	RunTask(ctx context.Context, in apitype.CreateTaskInput) (task *stored.Task, created bool, err error)
	// Status describes the gateway serving this client, or, for a Local
	// client, reports Running false with the record counts.
	Status(ctx context.Context) (apitype.GatewayStatus, error)
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
