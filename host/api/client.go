package api

import (
	"context"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// Client is what the CLI uses to read and change records. Local serves it
// from the store in this process; a gateway serves the same calls over its
// socket. Errors keep the sdk sentinels (errors.Is works on both).
type Client interface {
	ListTasks(ctx context.Context, f engine.TaskFilter) (engine.TaskPage, error)
	// ResolveTask finds a task by id, else by idempotency key.
	ResolveTask(ctx context.Context, token string) (*sdk.Task, error)
	CancelTask(ctx context.Context, id string) (*sdk.Task, error)

	ViewFlows(ctx context.Context, f engine.FlowFilter) (engine.FlowViewPage, error)
	CountFlows(ctx context.Context) (engine.FlowCounts, error)
	// ViewFlow finds a flow by id, else the newest flow of an owner key.
	ViewFlow(ctx context.Context, token string) (engine.FlowView, error)
	CreateFlow(ctx context.Context, in engine.CreateFlowInput) (*sdk.Flow, error)
	UpdateFlow(ctx context.Context, id string, expected int64, p engine.FlowPatch) (*sdk.Flow, error)
	CancelFlow(ctx context.Context, id string) (engine.CancelResult, error)

	// Close releases what the client holds (the store, or the connection).
	Close() error
}
