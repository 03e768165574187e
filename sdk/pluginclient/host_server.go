package pluginclient

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/flowgate/flowgate/sdk"
	pb "github.com/flowgate/flowgate/sdk/internal/proto"
)

// hostServer serves the gateway's Host to one plugin instance on its
// host socket. Errors cross as wire.Errors.ToStatus makes them.
type hostServer struct {
	pb.UnimplementedHostServiceServer
	host sdk.Host
}

func flowReply(f *sdk.Flow, err error) (*pb.FlowResponse, error) {
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	r, err := flowToProto(f)
	return r, wireErrors.ToStatus(err)
}

func (s *hostServer) GetFlow(ctx context.Context, r *pb.GetFlowRequest) (*pb.FlowResponse, error) {
	return flowReply(s.host.GetFlow(ctx, r.GetFlowId()))
}

func (s *hostServer) ListTasks(ctx context.Context, r *pb.ListTasksRequest) (*pb.ListTasksResponse, error) {
	tasks, err := s.host.ListTasks(ctx, r.GetFlowId())
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	out, err := tasksToProto(tasks)
	return out, wireErrors.ToStatus(err)
}

func (s *hostServer) CreateTask(ctx context.Context, r *pb.CreateTaskRequest) (*pb.CreateTaskResponse, error) {
	req, err := taskRequestFromProto(r)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	task, created, err := s.host.CreateTask(ctx, req)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	out, err := createdToProto(task, created)
	return out, wireErrors.ToStatus(err)
}

func (s *hostServer) UpdateFlow(ctx context.Context, r *pb.UpdateFlowRequest) (*pb.FlowResponse, error) {
	return flowReply(s.host.UpdateFlow(ctx, r.GetFlowId(), r.GetExpectedRevision(), flowUpdateFromProto(r)))
}

func (s *hostServer) Advance(ctx context.Context, r *pb.AdvanceRequest) (*pb.AdvanceResponse, error) {
	a, err := advanceFromProto(r)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	res, err := s.host.Advance(ctx, r.GetFlowId(), r.GetExpectedRevision(), a)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	out, err := advancedToProto(res)
	return out, wireErrors.ToStatus(err)
}

func (s *hostServer) SetWaiting(ctx context.Context, r *pb.SetWaitingRequest) (*pb.FlowResponse, error) {
	return flowReply(s.host.SetWaiting(ctx, r.GetFlowId(), r.GetExpectedRevision(), waitFromProto(r)))
}

func (s *hostServer) Resume(ctx context.Context, r *pb.ResumeRequest) (*pb.FlowResponse, error) {
	return flowReply(s.host.Resume(ctx, r.GetFlowId(), r.GetExpectedRevision(), resumeFromProto(r)))
}

func (s *hostServer) Finish(ctx context.Context, r *pb.EndRequest) (*pb.FlowResponse, error) {
	return flowReply(s.host.Finish(ctx, r.GetFlowId(), r.GetExpectedRevision(), endFromProto(r)))
}

func (s *hostServer) Fail(ctx context.Context, r *pb.EndRequest) (*pb.FlowResponse, error) {
	return flowReply(s.host.Fail(ctx, r.GetFlowId(), r.GetExpectedRevision(), endFromProto(r)))
}

func (s *hostServer) RequestCancel(ctx context.Context, r *pb.RequestCancelRequest) (*pb.FlowResponse, error) {
	return flowReply(s.host.RequestCancel(ctx, r.GetFlowId(), r.GetExpectedRevision()))
}

func (s *hostServer) Continue(ctx context.Context, r *pb.ContinueRequest) (*pb.ContinueResponse, error) {
	var req sdk.ContinueRequest
	if err := json.Unmarshal(r.GetRequestJson(), &req); err != nil {
		return nil, wireErrors.ToStatus(fmt.Errorf("%w: the continue request is not valid JSON: %v", sdk.ErrInvalid, err))
	}
	f, created, err := s.host.Continue(ctx, r.GetFlowId(), req)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, wireErrors.ToStatus(fmt.Errorf("encode flow: %w", err))
	}
	return &pb.ContinueResponse{FlowJson: b, Created: created}, nil
}

func (s *hostServer) CreateFlow(ctx context.Context, r *pb.CreateFlowRequest) (*pb.CreateFlowResponse, error) {
	f, created, err := s.host.CreateFlow(ctx, sdk.FlowRequest{
		IdempotencyKey: r.GetIdempotencyKey(), Goal: r.GetGoal(), OwnerKey: r.GetOwnerKey(),
		State: r.State, Labels: r.GetLabels(), ParentFlowID: r.GetParentFlowId(),
	})
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, wireErrors.ToStatus(fmt.Errorf("encode flow: %w", err))
	}
	return &pb.CreateFlowResponse{FlowJson: b, Created: created}, nil
}

func (s *hostServer) CancelTask(ctx context.Context, r *pb.CancelTaskRequest) (*pb.TaskResponse, error) {
	t, err := s.host.CancelTask(ctx, r.GetTaskId())
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	out, err := taskToProto(t)
	return out, wireErrors.ToStatus(err)
}

func (s *hostServer) WakeAt(ctx context.Context, r *pb.WakeAtRequest) (*pb.WakeAtResponse, error) {
	if err := s.host.WakeAt(ctx, r.GetFlowId(), time.UnixMilli(r.GetAtUnixMs()).UTC(), r.GetKey()); err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.WakeAtResponse{}, nil
}

func (s *hostServer) KeepValue(ctx context.Context, r *pb.KeepValueRequest) (*pb.KeepValueResponse, error) {
	sum, err := s.host.KeepValue(ctx, r.GetFlowId(), r.GetValue())
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.KeepValueResponse{Sha256: sum}, nil
}

func (s *hostServer) KeptValue(ctx context.Context, r *pb.KeptValueRequest) (*pb.KeptValueResponse, error) {
	b, err := s.host.KeptValue(ctx, r.GetFlowId(), r.GetSha256())
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.KeptValueResponse{Value: b}, nil
}

func (s *hostServer) StoreValue(ctx context.Context, r *pb.StoreValueRequest) (*pb.StoreValueResponse, error) {
	if err := s.host.StoreValue(ctx, r.GetScope(), r.GetKey(), r.GetValue()); err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.StoreValueResponse{}, nil
}

func (s *hostServer) StoredValue(ctx context.Context, r *pb.StoredValueRequest) (*pb.StoredValueResponse, error) {
	b, err := s.host.StoredValue(ctx, r.GetScope(), r.GetKey())
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.StoredValueResponse{Value: b}, nil
}

func (s *hostServer) Log(ctx context.Context, r *pb.LogRequest) (*pb.LogResponse, error) {
	if err := s.host.Log(ctx, r.GetLevel(), r.GetMessage(), r.GetFields()); err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.LogResponse{}, nil
}

func (s *hostServer) ListStages(ctx context.Context, _ *pb.ListStagesRequest) (*pb.ListStagesResponse, error) {
	st, err := s.host.ListStages(ctx)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return stagesToProto(st), nil
}

func (s *hostServer) RunStage(ctx context.Context, r *pb.RunStageRequest) (*pb.RunStageResponse, error) {
	out, err := s.host.RunStage(ctx, stageCallFromProto(r))
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.RunStageResponse{ItemsJson: out}, nil
}
