package pluginclient

import (
	"encoding/json"
	"fmt"

	"github.com/flowgate/flowgate/sdk"
	pb "github.com/flowgate/flowgate/sdk/internal/proto"
)

// This file and sdk/wire.go are the one seam between the hand-written sdk
// types and the generated protocol types. This file converts the
// gateway's end: events to the plugin, Host replies to it, and the
// plugin's Host requests; sdk/wire.go converts the other way.
//
// Records (Flow, Task, Event, TaskSpec, ContinueRequest) cross as the
// JSON of the sdk types. That JSON is already their canonical form (the
// store and the HTTP API write it), it keeps JSON null distinct from
// absent for state and wait, and a field added to a record crosses without
// a protocol change, so the wire can never silently drop one. A controller
// in another language reads the same JSON, described by
// sdk/proto/flowgate/controller/v1/records.schema.json, which a test
// checks against these types. Arguments that are not records (ids,
// revisions, keys, strings) are typed fields.

func infoFromProto(r *pb.GetInfoResponse) sdk.Info {
	return sdk.Info{
		Name:         r.GetName(),
		Version:      r.GetVersion(),
		APIVersion:   int(r.GetApiVersion()),
		Capabilities: r.GetCapabilities(),
		Stages:       stagesFromProto(r.GetStages()),
		Watch:        r.GetWatch(),
	}
}

// stagesFromProto is nil for none, as an Info without stages has.
func stagesFromProto(st []*pb.StageInfo) []sdk.Stage {
	if len(st) == 0 {
		return nil
	}
	out := make([]sdk.Stage, len(st))
	for i, s := range st {
		out[i] = sdk.Stage{Name: s.GetName(), Description: s.GetDescription(), SideEffects: s.GetSideEffects(), Plugin: s.GetPlugin()}
	}
	return out
}

func stagesToProto(st []sdk.Stage) *pb.ListStagesResponse {
	out := &pb.ListStagesResponse{Stages: make([]*pb.StageInfo, len(st))}
	for i, s := range st {
		out.Stages[i] = &pb.StageInfo{Name: s.Name, Description: s.Description, SideEffects: s.SideEffects, Plugin: s.Plugin}
	}
	return out
}

func stageCallToProto(c sdk.StageCall) *pb.RunStageRequest {
	return &pb.RunStageRequest{FlowId: c.FlowID, Key: c.Key, Name: c.Name, ArgsJson: c.Args, ItemsJson: c.Items}
}

func stageCallFromProto(r *pb.RunStageRequest) sdk.StageCall {
	return sdk.StageCall{FlowID: r.GetFlowId(), Key: r.GetKey(), Name: r.GetName(), Args: r.GetArgsJson(), Items: r.GetItemsJson()}
}

func eventToProto(ev sdk.Event) (*pb.HandleEventRequest, error) {
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encode event %d of flow %s: %w", ev.Seq, ev.FlowID, err)
	}
	return &pb.HandleEventRequest{EventJson: b}, nil
}

func flowToProto(f *sdk.Flow) (*pb.FlowResponse, error) {
	b, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("encode flow: %w", err)
	}
	return &pb.FlowResponse{FlowJson: b}, nil
}

// encodeTask is how a task crosses: its JSON.
func encodeTask(t *sdk.Task) ([]byte, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encode task %s: %w", t.ID, err)
	}
	return b, nil
}

func taskToProto(t *sdk.Task) (*pb.TaskResponse, error) {
	b, err := encodeTask(t)
	if err != nil {
		return nil, err
	}
	return &pb.TaskResponse{TaskJson: b}, nil
}

func tasksToProto(tasks []*sdk.Task) (*pb.ListTasksResponse, error) {
	out := &pb.ListTasksResponse{TasksJson: make([][]byte, len(tasks))}
	for i, t := range tasks {
		b, err := encodeTask(t)
		if err != nil {
			return nil, err
		}
		out.TasksJson[i] = b
	}
	return out, nil
}

func taskRequestFromProto(r *pb.CreateTaskRequest) (sdk.TaskRequest, error) {
	req := sdk.TaskRequest{
		FlowID:         r.GetFlowId(),
		IdempotencyKey: r.GetIdempotencyKey(),
		Runtime:        r.GetRuntime(),
		Label:          r.GetLabel(),
	}
	if len(r.GetSpecJson()) > 0 {
		if err := json.Unmarshal(r.GetSpecJson(), &req.Spec); err != nil {
			return sdk.TaskRequest{}, fmt.Errorf("%w: task spec is not an sdk.TaskSpec in JSON: %v", sdk.ErrInvalid, err)
		}
	}
	return req, nil
}

func createdToProto(t *sdk.Task, created bool) (*pb.CreateTaskResponse, error) {
	b, err := encodeTask(t)
	if err != nil {
		return nil, err
	}
	return &pb.CreateTaskResponse{TaskJson: b, Created: created}, nil
}

func flowUpdateFromProto(r *pb.UpdateFlowRequest) sdk.FlowUpdate {
	return sdk.FlowUpdate{
		State:          json.RawMessage(r.GetState()),
		Wait:           json.RawMessage(r.GetWait()),
		CurrentStep:    r.CurrentStep,
		BlockedTaskID:  r.BlockedTaskId,
		BlockedSummary: r.BlockedSummary,
	}
}

func waitFromProto(r *pb.SetWaitingRequest) sdk.WaitRequest {
	return sdk.WaitRequest{
		CurrentStep:    r.GetCurrentStep(),
		State:          json.RawMessage(r.GetState()),
		Wait:           json.RawMessage(r.GetWait()),
		BlockedTaskID:  r.GetBlockedTaskId(),
		BlockedSummary: r.GetBlockedSummary(),
	}
}

func resumeFromProto(r *pb.ResumeRequest) sdk.ResumeRequest {
	return sdk.ResumeRequest{
		Status:      sdk.FlowStatus(r.GetStatus()),
		CurrentStep: r.GetCurrentStep(),
		State:       json.RawMessage(r.GetState()),
	}
}

func endFromProto(r *pb.EndRequest) sdk.EndRequest {
	return sdk.EndRequest{
		CurrentStep:    r.GetCurrentStep(),
		State:          json.RawMessage(r.GetState()),
		BlockedTaskID:  r.GetBlockedTaskId(),
		BlockedSummary: r.GetBlockedSummary(),
		Partial:        r.GetPartial(),
	}
}

func advanceFromProto(r *pb.AdvanceRequest) (sdk.AdvanceRequest, error) {
	a := sdk.AdvanceRequest{
		Update: sdk.FlowUpdate{
			State:          json.RawMessage(r.GetState()),
			Wait:           json.RawMessage(r.GetWait()),
			CurrentStep:    r.CurrentStep,
			BlockedTaskID:  r.BlockedTaskId,
			BlockedSummary: r.BlockedSummary,
		},
		Tasks:  make([]sdk.TaskRequest, len(r.GetTasks())),
		AckSeq: r.GetAckSeq(),
	}
	for i, t := range r.GetTasks() {
		req, err := taskRequestFromProto(t)
		if err != nil {
			return sdk.AdvanceRequest{}, fmt.Errorf("task %d: %w", i, err)
		}
		a.Tasks[i] = req
	}
	return a, nil
}

func advancedToProto(res sdk.AdvanceResult) (*pb.AdvanceResponse, error) {
	f, err := flowToProto(res.Flow)
	if err != nil {
		return nil, err
	}
	out := &pb.AdvanceResponse{FlowJson: f.GetFlowJson(), Tasks: make([]*pb.CreateTaskResponse, len(res.Tasks))}
	for i, t := range res.Tasks {
		if out.Tasks[i], err = createdToProto(t, res.Created[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}
