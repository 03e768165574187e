package sdk

import (
	"encoding/json"
	"fmt"

	pb "github.com/flowgate/flowgate/sdk/internal/proto"
)

// This file is the one seam between the hand-written sdk types and the
// generated protocol types, for both ends: the plugin's (the controller
// server and the Host client a controller is handed) and the gateway's
// (the controller client and the Host server, which sdk/pluginclient
// reaches through sdk/internal/wire). Each pair converts one way and back
// beside each other, so an end can never read what the other did not
// write.
//
// Records (Flow, Task, Event, TaskSpec, ContinueRequest) cross as the
// JSON of the sdk types. That JSON is already their canonical form (the
// store and the HTTP API write it; for a task, with the gateway's own
// bookkeeping beside it, which never crosses), it keeps JSON null distinct from
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

func infoFromProto(r *pb.GetInfoResponse) Info {
	return Info{
		Name:         r.GetName(),
		Version:      r.GetVersion(),
		APIVersion:   int(r.GetApiVersion()),
		Capabilities: r.GetCapabilities(),
		Stages:       stagesFromProto(r.GetStages()),
		Watch:        r.GetWatch(),
	}
}

func stagesToProto(st []Stage) []*pb.StageInfo {
	out := make([]*pb.StageInfo, len(st))
	for i, s := range st {
		out[i] = &pb.StageInfo{Name: s.Name, Description: s.Description, SideEffects: s.SideEffects, Plugin: s.Plugin}
	}
	return out
}

// stagesFromProto is nil for none, as an Info without stages has, so a
// list that crossed compares equal to the one sent.
func stagesFromProto(st []*pb.StageInfo) []Stage {
	if len(st) == 0 {
		return nil
	}
	out := make([]Stage, len(st))
	for i, s := range st {
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

// eventToProto is ev as it crosses, with f, its flow as the gateway read
// it, when f is not nil.
func eventToProto(ev Event, f *Flow) (*pb.HandleEventRequest, error) {
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encode event %d of flow %s: %w", ev.Seq, ev.FlowID, err)
	}
	r := &pb.HandleEventRequest{EventJson: b}
	if f != nil {
		if r.FlowJson, err = encodeFlow(f); err != nil {
			return nil, fmt.Errorf("event %d of flow %s: %w", ev.Seq, ev.FlowID, err)
		}
	}
	return r, nil
}

func eventFromProto(r *pb.HandleEventRequest) (Event, error) {
	var ev Event
	if err := json.Unmarshal(r.GetEventJson(), &ev); err != nil {
		return Event{}, fmt.Errorf("%w: event is not an sdk.Event in JSON: %v", ErrInvalid, err)
	}
	return ev, nil
}

// encodeFlow is how a flow crosses: its JSON.
func encodeFlow(f *Flow) ([]byte, error) {
	b, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("encode flow: %w", err)
	}
	return b, nil
}

func decodeFlow(b []byte) (*Flow, error) {
	f := new(Flow)
	if err := json.Unmarshal(b, f); err != nil {
		return nil, fmt.Errorf("gateway sent a flow that is not an sdk.Flow in JSON: %w", err)
	}
	return f, nil
}

// encodeTask is how a task crosses: its JSON.
func encodeTask(t *Task) ([]byte, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encode task %s: %w", t.ID, err)
	}
	return b, nil
}

func decodeTask(b []byte) (*Task, error) {
	t := new(Task)
	if err := json.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("gateway sent a task that is not an sdk.Task in JSON: %w", err)
	}
	return t, nil
}

func tasksToProto(tasks []*Task) (*pb.ListTasksResponse, error) {
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

func taskRequestFromProto(r *pb.CreateTaskRequest) (TaskRequest, error) {
	req := TaskRequest{
		FlowID:         r.GetFlowId(),
		IdempotencyKey: r.GetIdempotencyKey(),
		Runtime:        r.GetRuntime(),
		Label:          r.GetLabel(),
	}
	if len(r.GetSpecJson()) > 0 {
		if err := json.Unmarshal(r.GetSpecJson(), &req.Spec); err != nil {
			return TaskRequest{}, fmt.Errorf("%w: task spec is not an sdk.TaskSpec in JSON: %v", ErrInvalid, err)
		}
	}
	return req, nil
}

func createdToProto(t *Task, created bool) (*pb.CreateTaskResponse, error) {
	b, err := encodeTask(t)
	if err != nil {
		return nil, err
	}
	return &pb.CreateTaskResponse{TaskJson: b, Created: created}, nil
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

func flowUpdateFromProto(r *pb.UpdateFlowRequest) FlowUpdate {
	return FlowUpdate{
		State:          json.RawMessage(r.GetState()),
		Wait:           json.RawMessage(r.GetWait()),
		CurrentStep:    r.CurrentStep,
		BlockedTaskID:  r.BlockedTaskId,
		BlockedSummary: r.BlockedSummary,
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

func waitFromProto(r *pb.SetWaitingRequest) WaitRequest {
	return WaitRequest{
		CurrentStep:    r.GetCurrentStep(),
		State:          json.RawMessage(r.GetState()),
		Wait:           json.RawMessage(r.GetWait()),
		BlockedTaskID:  r.GetBlockedTaskId(),
		BlockedSummary: r.GetBlockedSummary(),
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

func resumeFromProto(r *pb.ResumeRequest) ResumeRequest {
	return ResumeRequest{
		Status:      FlowStatus(r.GetStatus()),
		CurrentStep: r.GetCurrentStep(),
		State:       json.RawMessage(r.GetState()),
	}
}

func endToProto(flowID string, expected int64, e EndRequest) (*pb.EndRequest, error) {
	r := &pb.EndRequest{
		FlowId:           flowID,
		ExpectedRevision: expected,
		CurrentStep:      e.CurrentStep,
		State:            e.State,
		BlockedTaskId:    e.BlockedTaskID,
		BlockedSummary:   e.BlockedSummary,
		Partial:          e.Partial,
	}
	if e.Output != nil {
		b, err := json.Marshal(e.Output)
		if err != nil {
			return nil, fmt.Errorf("encode the flow's output: %w", err)
		}
		r.OutputJson = b
	}
	return r, nil
}

// endFromProto returns the EndRequest r carries; a controller of before
// output_json sends none, and its flows end with no output.
func endFromProto(r *pb.EndRequest) (EndRequest, error) {
	e := EndRequest{
		CurrentStep:    r.GetCurrentStep(),
		State:          json.RawMessage(r.GetState()),
		BlockedTaskID:  r.GetBlockedTaskId(),
		BlockedSummary: r.GetBlockedSummary(),
		Partial:        r.GetPartial(),
	}
	if b := r.GetOutputJson(); len(b) > 0 {
		e.Output = new(Output)
		if err := json.Unmarshal(b, e.Output); err != nil {
			return EndRequest{}, fmt.Errorf("%w: output_json is no sdk.Output: %v", ErrInvalid, err)
		}
	}
	return e, nil
}

func advanceToProto(flowID string, expected int64, a AdvanceRequest) (*pb.AdvanceRequest, error) {
	u := flowUpdateToProto(flowID, expected, a.Update)
	out := &pb.AdvanceRequest{
		FlowId:           u.FlowId,
		ExpectedRevision: u.ExpectedRevision,
		State:            u.State,
		Wait:             u.Wait,
		CurrentStep:      u.CurrentStep,
		BlockedTaskId:    u.BlockedTaskId,
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

func advanceFromProto(r *pb.AdvanceRequest) (AdvanceRequest, error) {
	a := AdvanceRequest{
		Update: flowUpdateFromProto(&pb.UpdateFlowRequest{
			State: r.GetState(), Wait: r.GetWait(), CurrentStep: r.CurrentStep,
			BlockedTaskId: r.BlockedTaskId, BlockedSummary: r.BlockedSummary,
		}),
		Tasks:  make([]TaskRequest, len(r.GetTasks())),
		AckSeq: r.GetAckSeq(),
	}
	for i, t := range r.GetTasks() {
		req, err := taskRequestFromProto(t)
		if err != nil {
			return AdvanceRequest{}, fmt.Errorf("task %d: %w", i, err)
		}
		a.Tasks[i] = req
	}
	return a, nil
}

func advancedToProto(res AdvanceResult) (*pb.AdvanceResponse, error) {
	f, err := encodeFlow(res.Flow)
	if err != nil {
		return nil, err
	}
	out := &pb.AdvanceResponse{FlowJson: f, Tasks: make([]*pb.CreateTaskResponse, len(res.Tasks))}
	for i, t := range res.Tasks {
		if out.Tasks[i], err = createdToProto(t, res.Created[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func advancedFromProto(r *pb.AdvanceResponse) (AdvanceResult, error) {
	f, err := decodeFlow(r.GetFlowJson())
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
