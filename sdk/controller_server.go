package sdk

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/flowgate/flowgate/sdk/internal/proto"
	"github.com/flowgate/flowgate/sdk/internal/wire"
)

// controllerServer serves a Controller inside the plugin process. Setup
// dials the gateway's Host service once; every event is handled with that
// one connection.
type controllerServer struct {
	pb.UnimplementedControllerServiceServer
	impl   Controller
	logger hclog.Logger

	mu   sync.Mutex
	host *hostClient // nil until Setup
}

func (s *controllerServer) GetInfo(ctx context.Context, _ *pb.GetInfoRequest) (*pb.GetInfoResponse, error) {
	info, err := s.impl.Info(ctx)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	if _, ok := s.impl.(Watcher); info.Watch && !ok {
		return nil, status.Errorf(codes.InvalidArgument, "controller %s declares Info.Watch but does not implement sdk.Watcher; add a Watch(ctx, host) method to it, or leave Watch false", info.Name)
	}
	return infoToProto(info), nil
}

// Setup dials the Host service the gateway serves on the unix socket it
// names. A second Setup replaces the connection; calls on the old one then
// fail with ErrPluginShutdown.
func (s *controllerServer) Setup(_ context.Context, r *pb.SetupRequest) (*pb.SetupResponse, error) {
	if !strings.HasPrefix(r.GetHostAddress(), "unix://") {
		return nil, status.Errorf(codes.InvalidArgument, "controller got host address %q in Setup, not a unix:// target; the gateway is older or newer than this sdk: rebuild the plugin with the gateway's flowgate version", r.GetHostAddress())
	}
	conn, err := grpc.NewClient(r.GetHostAddress(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(wire.MaxMessageSize), grpc.MaxCallSendMsgSize(wire.MaxMessageSize)))
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "controller could not dial the gateway's host service at %s: %v", r.GetHostAddress(), err)
	}
	s.mu.Lock()
	old := s.host
	s.host = newHostClient(conn)
	s.mu.Unlock()
	if old != nil {
		_ = old.close()
	}
	return &pb.SetupResponse{}, nil
}

func (s *controllerServer) currentHost() *hostClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.host
}

// HandleEvent hands one event to the controller. A panic in the controller
// fails the event (it is delivered again, and parks its flow if it keeps
// failing) instead of killing the process with the other flows' events.
func (s *controllerServer) HandleEvent(ctx context.Context, r *pb.HandleEventRequest) (_ *pb.HandleEventResponse, err error) {
	host := s.currentHost()
	if host == nil {
		return nil, status.Error(codes.FailedPrecondition, "controller got an event before Setup; the gateway must connect with pluginclient.Connect first")
	}
	ev, err := eventFromProto(r)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("controller panicked handling an event", "flow_id", ev.FlowID, "seq", ev.Seq, "type", ev.Type,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = status.Errorf(codes.Internal, "controller panicked handling event %d (%s) of flow %s: %v", ev.Seq, ev.Type, ev.FlowID, p)
		}
	}()
	if err := s.impl.HandleEvent(ctx, host.forEvent(ev.FlowID, r.GetFlowJson()), ev); err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.HandleEventResponse{}, nil
}

// Shutdown lets the controller stop, then closes the connection to the
// gateway: Host calls made after it fail with ErrPluginShutdown.
func (s *controllerServer) Shutdown(ctx context.Context, _ *pb.ShutdownRequest) (*pb.ShutdownResponse, error) {
	err := s.impl.Shutdown(ctx)
	s.mu.Lock()
	host := s.host
	s.mu.Unlock()
	if host != nil {
		_ = host.close()
	}
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.ShutdownResponse{}, nil
}

// RunStage runs one of the controller's stages with its StageProvider. A
// panic fails the stage, as it fails an event.
func (s *controllerServer) RunStage(ctx context.Context, r *pb.RunStageRequest) (_ *pb.RunStageResponse, err error) {
	host := s.currentHost()
	if host == nil {
		return nil, status.Error(codes.FailedPrecondition, "controller was asked to run a stage before Setup; the gateway must connect with pluginclient.Connect first")
	}
	call := stageCallFromProto(r)
	sp, ok := s.impl.(StageProvider)
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "controller declares stage %s but does not implement sdk.StageProvider; add a RunStage method to it", call.Name)
	}
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("controller panicked running a stage", "flow_id", call.FlowID, "stage", call.Name,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = status.Errorf(codes.Internal, "controller panicked running stage %s of flow %s: %v", call.Name, call.FlowID, p)
		}
	}()
	out, err := sp.RunStage(ctx, host, call)
	if err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.RunStageResponse{ItemsJson: out}, nil
}

// Watch runs the controller's Watcher until it returns or the gateway
// cancels the call. A panic ends the watch with an error, as an error
// does: the gateway restarts the plugin.
func (s *controllerServer) Watch(ctx context.Context, _ *pb.WatchRequest) (_ *pb.WatchResponse, err error) {
	host := s.currentHost()
	if host == nil {
		return nil, status.Error(codes.FailedPrecondition, "controller was asked to watch before Setup; the gateway must connect with pluginclient.Connect first")
	}
	w, ok := s.impl.(Watcher)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "controller does not implement sdk.Watcher; the gateway calls Watch only when Info.Watch is true")
	}
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("controller panicked watching", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = status.Errorf(codes.Internal, "controller panicked watching: %v", p)
		}
	}()
	if err := w.Watch(ctx, host); err != nil {
		return nil, wireErrors.ToStatus(err)
	}
	return &pb.WatchResponse{}, nil
}
