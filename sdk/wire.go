package sdk

import (
	"encoding/json"
	"fmt"

	pb "github.com/flowgate/flowgate/sdk/internal/proto"
)

// This file and sdk/pluginclient/wire.go are the one seam between the
// hand-written sdk types and the generated protocol types. This file
// converts the plugin's end: events and Host replies from the gateway,
// and the Host requests a controller makes; pluginclient converts the
// other way.
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

func infoToProto(i Info) *pb.GetInfoResponse {
	return &pb.GetInfoResponse{
		Name:         i.Name,
		Version:      i.Version,
		ApiVersion:   int32(i.APIVersion),
		Capabilities: i.Capabilities,
		Stages:       stagesToProto(i.Stages),
		Watch:        i.Watch,
	}
}

func stagesToProto(st []Stage) []*pb.StageInfo {
	out := make([]*pb.StageInfo, len(st))
	for i, s := range st {
		out[i] = &pb.StageInfo{Name: s.Name, Description: s.Description, SideEffects: s.SideEffects, Plugin: s.Plugin}
	}
	return out
}

// stagesFromProto is nil for none, as pluginclient's stagesFromProto is
// for an Info without stages. (The two cannot share one function: the
// converters are on sdk types, and sdk cannot import a package that
// imports it.)
func stagesFromProto(r *pb.ListStagesResponse) []Stage {
	if len(r.GetStages()) == 0 {
		return nil
	}
	out := make([]Stage, len(r.GetStages()))
	for i, s := range r.GetStages() {
		out[i] = Stage{Name: s.GetName(), Description: s.GetDescription(), SideEffects: s.GetSideEffects(), Plugin: s.GetPlugin()}
	}
	return out
}

func stageCallToProto(c StageCall) *pb.RunStageRequest {
	return &pb.RunStageRequest{FlowId: c.FlowID, Key: c.Key, Name: c.Name, ArgsJson: c.Args, ItemsJson: c.Items}
}

func stageCallFromProto(r *pb.RunStageRequest) StageCall {
	return StageCall{FlowID: r.GetFlowId(), Key: r.GetKey(), Name: r.GetName(), Args: r.GetArgsJson(), Items: r.GetItemsJson()}
}

func eventFromProto(r *pb.HandleEventRequest) (Event, error) {
	var ev Event
	if err := json.Unmarshal(r.GetEventJson(), &ev); err != nil {
		return Event{}, fmt.Errorf("%w: event is not an sdk.Event in JSON: %v", ErrInvalid, err)
	}
	return ev, nil
}

func flowFromProto(r *pb.FlowResponse) (*Flow, error) {
	f := new(Flow)
	if err := json.Unmarshal(r.GetFlowJson(), f); err != nil {
		return nil, fmt.Errorf("gateway sent a flow that is not an sdk.Flow in JSON: %w", err)
	}
	return f, nil
}

// decodeTask is how a task crosses: its JSON.
func decodeTask(b []byte) (*Task, error) {
	t := new(Task)
	if err := json.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("gateway sent a task that is not an sdk.Task in JSON: %w", err)
	}
	return t, nil
}

func taskFromProto(r *pb.TaskResponse) (*Task, error) { return decodeTask(r.GetTaskJson()) }

func tasksFromProto(r *pb.ListTasksResponse) ([]*Task, error) {
	out := make([]*Task, len(r.GetTasksJson()))
	for i, b := range r.GetTasksJson() {
		t, err := decodeTask(b)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

func taskRequestToProto(req TaskRequest) (*pb.CreateTaskRequest, error) {
	spec, err := json.Marshal(req.Spec)
	if err != nil {
		return nil, fmt.Errorf("%w: encode task spec: %v", ErrInvalid, err)
	}
	return &pb.CreateTaskRequest{
		FlowId:         req.FlowID,
		IdempotencyKey: req.IdempotencyKey,
		Runtime:        req.Runtime,
		Label:          req.Label,
		SpecJson:       spec,
	}, nil
}

func createdFromProto(r *pb.CreateTaskResponse) (*Task, bool, error) {
	t, err := decodeTask(r.GetTaskJson())
	if err != nil {
		return nil, false, err
	}
	return t, r.GetCreated(), nil
}

func flowUpdateToProto(flowID string, expected int64, u FlowUpdate) *pb.UpdateFlowRequest {
	return &pb.UpdateFlowRequest{
		FlowId:           flowID,
		ExpectedRevision: expected,
		State:            u.State,
		Wait:             u.Wait,
		CurrentStep:      u.CurrentStep,
		BlockedTaskId:    u.BlockedTaskID,
		BlockedSummary:   u.BlockedSummary,
	}
}

func waitToProto(flowID string, expected int64, w WaitRequest) *pb.SetWaitingRequest {
	return &pb.SetWaitingRequest{
		FlowId:           flowID,
		ExpectedRevision: expected,
		CurrentStep:      w.CurrentStep,
		State:            w.State,
		Wait:             w.Wait,
		BlockedTaskId:    w.BlockedTaskID,
		BlockedSummary:   w.BlockedSummary,
	}
}

func resumeToProto(flowID string, expected int64, rr ResumeRequest) *pb.ResumeRequest {
	return &pb.ResumeRequest{
		FlowId:           flowID,
		ExpectedRevision: expected,
		Status:           string(rr.Status),
		CurrentStep:      rr.CurrentStep,
		State:            rr.State,
	}
}

func endToProto(flowID string, expected int64, e EndRequest) *pb.EndRequest {
	return &pb.EndRequest{
		FlowId:           flowID,
		ExpectedRevision: expected,
		CurrentStep:      e.CurrentStep,
		State:            e.State,
		BlockedTaskId:    e.BlockedTaskID,
		BlockedSummary:   e.BlockedSummary,
		Partial:          e.Partial,
	}
}

func advanceToProto(flowID string, expected int64, a AdvanceRequest) (*pb.AdvanceRequest, error) {
	u := a.Update
	out := &pb.AdvanceRequest{
		FlowId:           flowID,
		ExpectedRevision: expected,
		State:            u.State,
		Wait:             u.Wait,
		CurrentStep:      u.CurrentStep,
		BlockedTaskId:    u.BlockedTaskID,
		BlockedSummary:   u.BlockedSummary,
		Tasks:            make([]*pb.CreateTaskRequest, len(a.Tasks)),
		AckSeq:           a.AckSeq,
	}
	for i, req := range a.Tasks {
		t, err := taskRequestToProto(req)
		if err != nil {
			return nil, fmt.Errorf("task %d: %w", i, err)
		}
		out.Tasks[i] = t
	}
	return out, nil
}

func advancedFromProto(r *pb.AdvanceResponse) (AdvanceResult, error) {
	f, err := flowFromProto(&pb.FlowResponse{FlowJson: r.GetFlowJson()})
	if err != nil {
		return AdvanceResult{}, err
	}
	res := AdvanceResult{Flow: f, Tasks: make([]*Task, len(r.GetTasks())), Created: make([]bool, len(r.GetTasks()))}
	for i, t := range r.GetTasks() {
		if res.Tasks[i], res.Created[i], err = createdFromProto(t); err != nil {
			return AdvanceResult{}, err
		}
	}
	return res, nil
}
