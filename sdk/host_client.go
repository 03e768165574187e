package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	pb "github.com/flowgate/flowgate/sdk/internal/proto"
)

// hostClient is the Host a controller is handed: a client of the gateway's
// Host service over the one connection to its socket dialled in Setup. Once that
// connection is closed (Shutdown, or a second Setup) or broken (the gateway
// went away), every call fails with ErrPluginShutdown.
type hostClient struct {
	conn   *grpc.ClientConn
	client pb.HostServiceClient
	closed atomic.Bool
}

var _ Host = (*hostClient)(nil)

func newHostClient(conn *grpc.ClientConn) *hostClient {
	return &hostClient{conn: conn, client: pb.NewHostServiceClient(conn)}
}

// close ends the connection; calls made after it fail with
// ErrPluginShutdown.
func (h *hostClient) close() error {
	if h.closed.Swap(true) {
		return nil
	}
	return h.conn.Close()
}

// err turns a call's error into the gateway's error (see wire.Errors.FromStatus),
// or ErrPluginShutdown once this side closed the connection.
func (h *hostClient) err(method string, err error) error {
	if err == nil {
		return nil
	}
	if h.closed.Load() {
		return fmt.Errorf("%w: host %s called after the connection to the gateway was closed", ErrPluginShutdown, method)
	}
	return wireErrors.FromStatus(err)
}

func (h *hostClient) flow(method string, r *pb.FlowResponse, err error) (*Flow, error) {
	if err != nil {
		return nil, h.err(method, err)
	}
	return flowFromProto(r)
}

// GetFlow implements Host.
func (h *hostClient) GetFlow(ctx context.Context, flowID string) (*Flow, error) {
	r, err := h.client.GetFlow(ctx, &pb.GetFlowRequest{FlowId: flowID})
	return h.flow("GetFlow", r, err)
}

// ListTasks implements Host.
func (h *hostClient) ListTasks(ctx context.Context, flowID string) ([]*Task, error) {
	r, err := h.client.ListTasks(ctx, &pb.ListTasksRequest{FlowId: flowID})
	if err != nil {
		return nil, h.err("ListTasks", err)
	}
	return tasksFromProto(r)
}

// CreateTask implements Host.
func (h *hostClient) CreateTask(ctx context.Context, req TaskRequest) (*Task, bool, error) {
	in, err := taskRequestToProto(req)
	if err != nil {
		return nil, false, err
	}
	r, err := h.client.CreateTask(ctx, in)
	if err != nil {
		return nil, false, h.err("CreateTask", err)
	}
	return createdFromProto(r)
}

// UpdateFlow implements Host.
func (h *hostClient) UpdateFlow(ctx context.Context, flowID string, expected int64, u FlowUpdate) (*Flow, error) {
	r, err := h.client.UpdateFlow(ctx, flowUpdateToProto(flowID, expected, u))
	return h.flow("UpdateFlow", r, err)
}

// Advance implements Host.
func (h *hostClient) Advance(ctx context.Context, flowID string, expected int64, a AdvanceRequest) (AdvanceResult, error) {
	in, err := advanceToProto(flowID, expected, a)
	if err != nil {
		return AdvanceResult{}, err
	}
	r, err := h.client.Advance(ctx, in)
	if err != nil {
		return AdvanceResult{}, h.err("Advance", err)
	}
	return advancedFromProto(r)
}

// SetWaiting implements Host.
func (h *hostClient) SetWaiting(ctx context.Context, flowID string, expected int64, w WaitRequest) (*Flow, error) {
	r, err := h.client.SetWaiting(ctx, waitToProto(flowID, expected, w))
	return h.flow("SetWaiting", r, err)
}

// Resume implements Host.
func (h *hostClient) Resume(ctx context.Context, flowID string, expected int64, rr ResumeRequest) (*Flow, error) {
	r, err := h.client.Resume(ctx, resumeToProto(flowID, expected, rr))
	return h.flow("Resume", r, err)
}

// Finish implements Host.
func (h *hostClient) Finish(ctx context.Context, flowID string, expected int64, e EndRequest) (*Flow, error) {
	r, err := h.client.Finish(ctx, endToProto(flowID, expected, e))
	return h.flow("Finish", r, err)
}

// Fail implements Host.
func (h *hostClient) Fail(ctx context.Context, flowID string, expected int64, e EndRequest) (*Flow, error) {
	r, err := h.client.Fail(ctx, endToProto(flowID, expected, e))
	return h.flow("Fail", r, err)
}

// CancelTask implements Host.
func (h *hostClient) CancelTask(ctx context.Context, taskID string) (*Task, error) {
	r, err := h.client.CancelTask(ctx, &pb.CancelTaskRequest{TaskId: taskID})
	if err != nil {
		return nil, h.err("CancelTask", err)
	}
	return taskFromProto(r)
}

// CreateFlow implements Host.
func (h *hostClient) CreateFlow(ctx context.Context, req FlowRequest) (*Flow, bool, error) {
	r, err := h.client.CreateFlow(ctx, &pb.CreateFlowRequest{
		IdempotencyKey: req.IdempotencyKey, Goal: req.Goal, OwnerKey: req.OwnerKey,
		State: req.State, Labels: req.Labels, ParentFlowId: req.ParentFlowID,
	})
	if err != nil {
		return nil, false, h.err("CreateFlow", err)
	}
	f, err := flowFromProto(&pb.FlowResponse{FlowJson: r.GetFlowJson()})
	return f, r.GetCreated(), err
}

// Continue implements Host.
func (h *hostClient) Continue(ctx context.Context, flowID string, req ContinueRequest) (*Flow, bool, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, false, fmt.Errorf("encode the continue request: %w", err)
	}
	r, err := h.client.Continue(ctx, &pb.ContinueRequest{FlowId: flowID, RequestJson: b})
	if err != nil {
		return nil, false, h.err("Continue", err)
	}
	f, err := flowFromProto(&pb.FlowResponse{FlowJson: r.GetFlowJson()})
	return f, r.GetCreated(), err
}

// RequestCancel implements Host.
func (h *hostClient) RequestCancel(ctx context.Context, flowID string, expected int64) (*Flow, error) {
	r, err := h.client.RequestCancel(ctx, &pb.RequestCancelRequest{FlowId: flowID, ExpectedRevision: expected})
	return h.flow("RequestCancel", r, err)
}

// WakeAt implements Host.
func (h *hostClient) WakeAt(ctx context.Context, flowID string, at time.Time, key string) error {
	_, err := h.client.WakeAt(ctx, &pb.WakeAtRequest{FlowId: flowID, Key: key, AtUnixMs: at.UnixMilli()})
	return h.err("WakeAt", err)
}

// KeepValue implements Host.
func (h *hostClient) KeepValue(ctx context.Context, flowID string, value []byte) (string, error) {
	r, err := h.client.KeepValue(ctx, &pb.KeepValueRequest{FlowId: flowID, Value: value})
	if err != nil {
		return "", h.err("KeepValue", err)
	}
	return r.GetSha256(), nil
}

// KeptValue implements Host.
func (h *hostClient) KeptValue(ctx context.Context, flowID, sum string) ([]byte, error) {
	r, err := h.client.KeptValue(ctx, &pb.KeptValueRequest{FlowId: flowID, Sha256: sum})
	if err != nil {
		return nil, h.err("KeptValue", err)
	}
	return r.GetValue(), nil
}

// StoreValue implements Host.
func (h *hostClient) StoreValue(ctx context.Context, scope, key string, value []byte) error {
	_, err := h.client.StoreValue(ctx, &pb.StoreValueRequest{Scope: scope, Key: key, Value: value})
	return h.err("StoreValue", err)
}

// StoredValue implements Host.
func (h *hostClient) StoredValue(ctx context.Context, scope, key string) ([]byte, error) {
	r, err := h.client.StoredValue(ctx, &pb.StoredValueRequest{Scope: scope, Key: key})
	if err != nil {
		return nil, h.err("StoredValue", err)
	}
	return r.GetValue(), nil
}

// Log implements Host.
func (h *hostClient) Log(ctx context.Context, level, msg string, fields map[string]string) error {
	_, err := h.client.Log(ctx, &pb.LogRequest{Level: level, Message: msg, Fields: fields})
	return h.err("Log", err)
}

// ListStages implements Host.
func (h *hostClient) ListStages(ctx context.Context) ([]Stage, error) {
	r, err := h.client.ListStages(ctx, &pb.ListStagesRequest{})
	if err != nil {
		return nil, h.err("ListStages", err)
	}
	return stagesFromProto(r), nil
}

// RunStage implements Host.
func (h *hostClient) RunStage(ctx context.Context, call StageCall) (json.RawMessage, error) {
	r, err := h.client.RunStage(ctx, stageCallToProto(call))
	if err != nil {
		return nil, h.err("RunStage", err)
	}
	return r.GetItemsJson(), nil
}
