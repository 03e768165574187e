package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	pb "github.com/flowgate/flowgate/sdk/internal/proto"
)

// This file is the Host service over gRPC, both ends of each call side by
// side: hostClient, the Host a controller is handed in its plugin process,
// and hostServer, which serves the gateway's Host to that plugin (for
// sdk/pluginclient, through sdk/internal/wire). A new Host call is one
// pair here; its conversions are in wire.go.

// hostClient is the Host a controller is handed: a client of the gateway's
// Host service over the one connection to its socket dialled in Setup. Once that
// connection is closed (Shutdown, or a second Setup) or broken (the gateway
// went away), every call fails with ErrPluginShutdown.
type hostClient struct {
	conn   *grpc.ClientConn
	client pb.HostServiceClient
	closed *atomic.Bool // shared with the copies forEvent makes
}

var _ Host = (*hostClient)(nil)

func newHostClient(conn *grpc.ClientConn) *hostClient {
	return &hostClient{conn: conn, client: pb.NewHostServiceClient(conn), closed: new(atomic.Bool)}
}

// forEvent returns h as the handling of one event of flow flowID sees it,
// given flow, that flow's JSON as the gateway sent it with the event
// (HandleEventRequest.flow_json): when the handling's first call is
// GetFlow of flowID, flow answers it without a round trip. Every other
// call, and every call after the first, goes to the gateway, so a read
// made after a write still sees the write. An empty flow (a gateway that
// sends none) leaves h as it is.
func (h *hostClient) forEvent(flowID string, flow []byte) *hostClient {
	if len(flow) == 0 {
		return h
	}
	first := &firstRead{ClientConnInterface: h.conn, flowID: flowID, flow: flow}
	return &hostClient{conn: h.conn, client: pb.NewHostServiceClient(first), closed: h.closed}
}

// firstRead is the connection to the gateway as one event's handling
// uses it: see hostClient.forEvent.
type firstRead struct {
	grpc.ClientConnInterface
	flowID string

	mu   sync.Mutex
	flow []byte // nil once the first call was made
}

// take returns the flow the event came with if no call was made before,
// and nil from then on.
func (c *firstRead) take() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.flow
	c.flow = nil
	return f
}

func (c *firstRead) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if flow := c.take(); flow != nil && method == pb.HostService_GetFlow_FullMethodName {
		req, isGet := args.(*pb.GetFlowRequest)
		resp, isFlow := reply.(*pb.FlowResponse)
		if isGet && isFlow && req.GetFlowId() == c.flowID {
			resp.FlowJson = flow
			return nil
		}
	}
	return c.ClientConnInterface.Invoke(ctx, method, args, reply, opts...)
}

func (c *firstRead) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	c.take()
	return c.ClientConnInterface.NewStream(ctx, desc, method, opts...)
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
	return decodeFlow(r.GetFlowJson())
}

// hostServer serves the gateway's Host to one plugin instance on its
// host socket: each call goes to the Host that host returns then (the
// gateway binds a plugin started before its supervisor to the
// supervisor's Host; see pluginclient.Plugin.BindHost). Errors cross as
// wireErrors.ToStatus makes them.
type hostServer struct {
	pb.UnimplementedHostServiceServer
	host func() Host
}

func flowReply(f *Flow, err error) (*pb.FlowResponse, error) {
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	b, err := encodeFlow(f)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.FlowResponse{FlowJson: b}, nil
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
	f, err := decodeFlow(r.GetFlowJson())
	return f, r.GetCreated(), err
}

func (s *hostServer) CreateFlow(ctx context.Context, r *pb.CreateFlowRequest) (*pb.CreateFlowResponse, error) {
	f, created, err := s.host().CreateFlow(ctx, FlowRequest{
		IdempotencyKey: r.GetIdempotencyKey(), Goal: r.GetGoal(), OwnerKey: r.GetOwnerKey(),
		State: r.State, Labels: r.GetLabels(), ParentFlowID: r.GetParentFlowId(),
	})
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	b, err := encodeFlow(f)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.CreateFlowResponse{FlowJson: b, Created: created}, nil
}

// GetFlow implements Host.
func (h *hostClient) GetFlow(ctx context.Context, flowID string) (*Flow, error) {
	r, err := h.client.GetFlow(ctx, &pb.GetFlowRequest{FlowId: flowID})
	return h.flow("GetFlow", r, err)
}

func (s *hostServer) GetFlow(ctx context.Context, r *pb.GetFlowRequest) (*pb.FlowResponse, error) {
	return flowReply(s.host().GetFlow(ctx, r.GetFlowId()))
}

// ListTasks implements Host.
func (h *hostClient) ListTasks(ctx context.Context, flowID string) ([]*Task, error) {
	r, err := h.client.ListTasks(ctx, &pb.ListTasksRequest{FlowId: flowID})
	if err != nil {
		return nil, h.err("ListTasks", err)
	}
	return tasksFromProto(r)
}

func (s *hostServer) ListTasks(ctx context.Context, r *pb.ListTasksRequest) (*pb.ListTasksResponse, error) {
	tasks, err := s.host().ListTasks(ctx, r.GetFlowId())
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	out, err := tasksToProto(tasks)
	return out, wireErrors.ToStatus(err)
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

func (s *hostServer) CreateTask(ctx context.Context, r *pb.CreateTaskRequest) (*pb.CreateTaskResponse, error) {
	req, err := taskRequestFromProto(r)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	task, created, err := s.host().CreateTask(ctx, req)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	out, err := createdToProto(task, created)
	return out, wireErrors.ToStatus(err)
}

// UpdateFlow implements Host.
func (h *hostClient) UpdateFlow(ctx context.Context, flowID string, expected int64, u FlowUpdate) (*Flow, error) {
	r, err := h.client.UpdateFlow(ctx, flowUpdateToProto(flowID, expected, u))
	return h.flow("UpdateFlow", r, err)
}

func (s *hostServer) UpdateFlow(ctx context.Context, r *pb.UpdateFlowRequest) (*pb.FlowResponse, error) {
	return flowReply(s.host().UpdateFlow(ctx, r.GetFlowId(), r.GetExpectedRevision(), flowUpdateFromProto(r)))
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

func (s *hostServer) Advance(ctx context.Context, r *pb.AdvanceRequest) (*pb.AdvanceResponse, error) {
	a, err := advanceFromProto(r)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	res, err := s.host().Advance(ctx, r.GetFlowId(), r.GetExpectedRevision(), a)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	out, err := advancedToProto(res)
	return out, wireErrors.ToStatus(err)
}

// SetWaiting implements Host.
func (h *hostClient) SetWaiting(ctx context.Context, flowID string, expected int64, w WaitRequest) (*Flow, error) {
	r, err := h.client.SetWaiting(ctx, waitToProto(flowID, expected, w))
	return h.flow("SetWaiting", r, err)
}

func (s *hostServer) SetWaiting(ctx context.Context, r *pb.SetWaitingRequest) (*pb.FlowResponse, error) {
	return flowReply(s.host().SetWaiting(ctx, r.GetFlowId(), r.GetExpectedRevision(), waitFromProto(r)))
}

// Resume implements Host.
func (h *hostClient) Resume(ctx context.Context, flowID string, expected int64, rr ResumeRequest) (*Flow, error) {
	r, err := h.client.Resume(ctx, resumeToProto(flowID, expected, rr))
	return h.flow("Resume", r, err)
}

func (s *hostServer) Resume(ctx context.Context, r *pb.ResumeRequest) (*pb.FlowResponse, error) {
	return flowReply(s.host().Resume(ctx, r.GetFlowId(), r.GetExpectedRevision(), resumeFromProto(r)))
}

// Finish implements Host.
func (h *hostClient) Finish(ctx context.Context, flowID string, expected int64, e EndRequest) (*Flow, error) {
	req, err := endToProto(flowID, expected, e)
	if err != nil {
		return nil, err
	}
	r, err := h.client.Finish(ctx, req)
	return h.flow("Finish", r, err)
}

func (s *hostServer) Finish(ctx context.Context, r *pb.EndRequest) (*pb.FlowResponse, error) {
	e, err := endFromProto(r)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return flowReply(s.host().Finish(ctx, r.GetFlowId(), r.GetExpectedRevision(), e))
}

// Fail implements Host.
func (h *hostClient) Fail(ctx context.Context, flowID string, expected int64, e EndRequest) (*Flow, error) {
	req, err := endToProto(flowID, expected, e)
	if err != nil {
		return nil, err
	}
	r, err := h.client.Fail(ctx, req)
	return h.flow("Fail", r, err)
}

func (s *hostServer) Fail(ctx context.Context, r *pb.EndRequest) (*pb.FlowResponse, error) {
	e, err := endFromProto(r)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return flowReply(s.host().Fail(ctx, r.GetFlowId(), r.GetExpectedRevision(), e))
}

// RequestCancel implements Host.
func (h *hostClient) RequestCancel(ctx context.Context, flowID string, expected int64) (*Flow, error) {
	r, err := h.client.RequestCancel(ctx, &pb.RequestCancelRequest{FlowId: flowID, ExpectedRevision: expected})
	return h.flow("RequestCancel", r, err)
}

func (s *hostServer) RequestCancel(ctx context.Context, r *pb.RequestCancelRequest) (*pb.FlowResponse, error) {
	return flowReply(s.host().RequestCancel(ctx, r.GetFlowId(), r.GetExpectedRevision()))
}

// CancelTask implements Host.
func (h *hostClient) CancelTask(ctx context.Context, taskID string) (*Task, error) {
	r, err := h.client.CancelTask(ctx, &pb.CancelTaskRequest{TaskId: taskID})
	if err != nil {
		return nil, h.err("CancelTask", err)
	}
	return decodeTask(r.GetTaskJson())
}

func (s *hostServer) CancelTask(ctx context.Context, r *pb.CancelTaskRequest) (*pb.TaskResponse, error) {
	t, err := s.host().CancelTask(ctx, r.GetTaskId())
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	b, err := encodeTask(t)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.TaskResponse{TaskJson: b}, nil
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
	f, err := decodeFlow(r.GetFlowJson())
	return f, r.GetCreated(), err
}

func (s *hostServer) Continue(ctx context.Context, r *pb.ContinueRequest) (*pb.ContinueResponse, error) {
	var req ContinueRequest
	if err := json.Unmarshal(r.GetRequestJson(), &req); err != nil {
		return nil, wireErrors.ToStatus(fmt.Errorf("%w: the continue request is not valid JSON: %v", ErrInvalid, err))
	}
	f, created, err := s.host().Continue(ctx, r.GetFlowId(), req)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	b, err := encodeFlow(f)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.ContinueResponse{FlowJson: b, Created: created}, nil
}

// WakeAt implements Host.
func (h *hostClient) WakeAt(ctx context.Context, flowID string, at time.Time, key string) error {
	_, err := h.client.WakeAt(ctx, &pb.WakeAtRequest{FlowId: flowID, Key: key, AtUnixMs: at.UnixMilli()})
	return h.err("WakeAt", err)
}

func (s *hostServer) WakeAt(ctx context.Context, r *pb.WakeAtRequest) (*pb.WakeAtResponse, error) {
	if err := s.host().WakeAt(ctx, r.GetFlowId(), time.UnixMilli(r.GetAtUnixMs()).UTC(), r.GetKey()); err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.WakeAtResponse{}, nil
}

// Log implements Host.
func (h *hostClient) Log(ctx context.Context, level, msg string, fields map[string]string) error {
	_, err := h.client.Log(ctx, &pb.LogRequest{Level: level, Message: msg, Fields: fields})
	return h.err("Log", err)
}

func (s *hostServer) Log(ctx context.Context, r *pb.LogRequest) (*pb.LogResponse, error) {
	if err := s.host().Log(ctx, r.GetLevel(), r.GetMessage(), r.GetFields()); err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.LogResponse{}, nil
}

// ListStages implements Host.
func (h *hostClient) ListStages(ctx context.Context) ([]Stage, error) {
	r, err := h.client.ListStages(ctx, &pb.ListStagesRequest{})
	if err != nil {
		return nil, h.err("ListStages", err)
	}
	return stagesFromProto(r.GetStages()), nil
}

func (s *hostServer) ListStages(ctx context.Context, _ *pb.ListStagesRequest) (*pb.ListStagesResponse, error) {
	st, err := s.host().ListStages(ctx)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.ListStagesResponse{Stages: stagesToProto(st)}, nil
}

// RunStage implements Host.
func (h *hostClient) RunStage(ctx context.Context, call StageCall) (json.RawMessage, error) {
	r, err := h.client.RunStage(ctx, stageCallToProto(call))
	if err != nil {
		return nil, h.err("RunStage", err)
	}
	return r.GetItemsJson(), nil
}

func (s *hostServer) RunStage(ctx context.Context, r *pb.RunStageRequest) (*pb.RunStageResponse, error) {
	out, err := s.host().RunStage(ctx, stageCallFromProto(r))
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.RunStageResponse{ItemsJson: out}, nil
}

// KeepValue implements Host.
func (h *hostClient) KeepValue(ctx context.Context, flowID string, value []byte) (string, error) {
	r, err := h.client.KeepValue(ctx, &pb.KeepValueRequest{FlowId: flowID, Value: value})
	if err != nil {
		return "", h.err("KeepValue", err)
	}
	return r.GetSha256(), nil
}

func (s *hostServer) KeepValue(ctx context.Context, r *pb.KeepValueRequest) (*pb.KeepValueResponse, error) {
	sum, err := s.host().KeepValue(ctx, r.GetFlowId(), r.GetValue())
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.KeepValueResponse{Sha256: sum}, nil
}

// KeptValue implements Host.
func (h *hostClient) KeptValue(ctx context.Context, flowID, sum string) ([]byte, error) {
	r, err := h.client.KeptValue(ctx, &pb.KeptValueRequest{FlowId: flowID, Sha256: sum})
	if err != nil {
		return nil, h.err("KeptValue", err)
	}
	return r.GetValue(), nil
}

func (s *hostServer) KeptValue(ctx context.Context, r *pb.KeptValueRequest) (*pb.KeptValueResponse, error) {
	b, err := s.host().KeptValue(ctx, r.GetFlowId(), r.GetSha256())
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.KeptValueResponse{Value: b}, nil
}

// StoreValue implements Host.
func (h *hostClient) StoreValue(ctx context.Context, scope, key string, value []byte) error {
	_, err := h.client.StoreValue(ctx, &pb.StoreValueRequest{Scope: scope, Key: key, Value: value})
	return h.err("StoreValue", err)
}

func (s *hostServer) StoreValue(ctx context.Context, r *pb.StoreValueRequest) (*pb.StoreValueResponse, error) {
	if err := s.host().StoreValue(ctx, r.GetScope(), r.GetKey(), r.GetValue()); err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.StoreValueResponse{}, nil
}

// StoredValue implements Host.
func (h *hostClient) StoredValue(ctx context.Context, scope, key string) ([]byte, error) {
	r, err := h.client.StoredValue(ctx, &pb.StoredValueRequest{Scope: scope, Key: key})
	if err != nil {
		return nil, h.err("StoredValue", err)
	}
	return r.GetValue(), nil
}

func (s *hostServer) StoredValue(ctx context.Context, r *pb.StoredValueRequest) (*pb.StoredValueResponse, error) {
	b, err := s.host().StoredValue(ctx, r.GetScope(), r.GetKey())
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.StoredValueResponse{Value: b}, nil
}
