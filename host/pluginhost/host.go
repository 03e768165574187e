package pluginhost

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/flowrule"
)

// host is the gateway as one plugin instance sees it: every call goes to
// the engine, on behalf of the controller name, and is refused with
// sdk.ErrPluginShutdown once the instance is stale (it crashed or was
// replaced), so a late call from an old instance can never race the new
// one.
type host struct {
	eng   *engine.Engine
	name  string
	epoch int64
	live  func(epoch int64) bool
	log   func(level, msg string, fields map[string]string)
	// stages runs the stages plugins provide; nil in a host made by
	// NewHost, which has no plugins.
	stages *Supervisor
	// owned are the flows own found the controller's (see owns).
	owned ownedFlows
}

var _ sdk.Host = (*host)(nil)

// NewHost returns the host a controller named controller sees when it
// runs in this process instead of as a plugin: the same engine calls and
// the same refusal (sdk.ErrNotManaged) of a flow the controller does not
// drive as a plugin instance's host, but never stale. Its Log calls go to
// log at their level; if log is nil, they are discarded.
func NewHost(eng *engine.Engine, controller string, log hclog.Logger) sdk.Host {
	return newHost(eng, controller, log, nil)
}

// newHost is NewHost reaching the stages the plugins of stages provide,
// or none when stages is nil.
func newHost(eng *engine.Engine, controller string, log hclog.Logger, stages *Supervisor) *host {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	return &host{eng: eng, name: controller, live: func(int64) bool { return true }, log: logTo(log), stages: stages}
}

// logTo returns a host's log function writing to log: a plugin's level
// name and fields become an hclog level and key-value pairs.
func logTo(log hclog.Logger) func(level, msg string, fields map[string]string) {
	return func(level, msg string, fields map[string]string) {
		args := make([]any, 0, 2*len(fields))
		for k, v := range fields {
			args = append(args, k, v)
		}
		log.Log(hclog.LevelFromString(level), msg, args...)
	}
}

func (h *host) check() error {
	if !h.live(h.epoch) {
		return fmt.Errorf("%w: instance %d of plugin %s was replaced", sdk.ErrPluginShutdown, h.epoch, h.name)
	}
	return nil
}

// own loads a flow, within ctx, and refuses one that another controller
// drives.
func (h *host) own(ctx context.Context, flowID string) (*sdk.Flow, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	f, err := h.eng.WithContext(ctx).GetFlow(flowID)
	if err != nil {
		return nil, err
	}
	if f.SyncMode != sdk.SyncManaged || f.ControllerID != h.name {
		return nil, fmt.Errorf("%w: flow %s is driven by %q, not by controller %s", sdk.ErrNotManaged, flowID, f.ControllerID, h.name)
	}
	h.owned.add(flowID)
	return f, nil
}

// CreateFlow implements sdk.Host: the flow's controller is always the
// caller, so no controller can create flows for another.
func (h *host) CreateFlow(ctx context.Context, req sdk.FlowRequest) (*sdk.Flow, bool, error) {
	if err := h.check(); err != nil {
		return nil, false, err
	}
	return h.eng.WithContext(ctx).CreateControllerFlow(h.name, req)
}

func (h *host) GetFlow(ctx context.Context, flowID string) (*sdk.Flow, error) {
	return h.own(ctx, flowID)
}

// ListTasks implements sdk.Host. A flow with no task is loaded to tell
// it from one that is gone (sdk.ErrNotFound): the list does not.
func (h *host) ListTasks(ctx context.Context, flowID string) ([]*sdk.Task, error) {
	if err := h.owns(ctx, flowID); err != nil {
		return nil, err
	}
	tasks, err := h.eng.WithContext(ctx).FlowTasks(flowID)
	if err == nil && len(tasks) == 0 {
		_, err = h.own(ctx, flowID)
	}
	return stored.Publics(tasks), err
}

func (h *host) CreateTask(ctx context.Context, req sdk.TaskRequest) (*sdk.Task, bool, error) {
	if _, err := h.own(ctx, req.FlowID); err != nil {
		return nil, false, err
	}
	t, created, err := h.eng.WithContext(ctx).CreateTask(h.taskInput(req))
	return t.Public(), created, err
}

// taskInput is the engine's input for a task the controller asks for:
// its runtime defaults to the controller's name.
func (h *host) taskInput(req sdk.TaskRequest) engine.CreateTaskInput {
	runtime := req.Runtime
	if runtime == "" {
		runtime = h.name
	}
	return engine.CreateTaskInput{
		FlowID: req.FlowID, Runtime: runtime, Label: req.Label, Spec: req.Spec, IdempotencyKey: req.IdempotencyKey,
	}
}

// Advance implements sdk.Host: one engine transaction (engine.Advance).
func (h *host) Advance(ctx context.Context, flowID string, expected int64, a sdk.AdvanceRequest) (sdk.AdvanceResult, error) {
	if err := h.owns(ctx, flowID); err != nil {
		return sdk.AdvanceResult{}, err
	}
	reqs, err := flowrule.AdvanceTasks(flowID, a)
	if err != nil {
		return sdk.AdvanceResult{}, err
	}
	in := make([]engine.CreateTaskInput, len(reqs))
	for i, req := range reqs {
		in[i] = h.taskInput(req)
	}
	return h.eng.WithContext(ctx).Advance(flowID, expected, a.Update, in, a.AckSeq)
}

func (h *host) UpdateFlow(ctx context.Context, flowID string, expected int64, u sdk.FlowUpdate) (*sdk.Flow, error) {
	if err := h.owns(ctx, flowID); err != nil {
		return nil, err
	}
	return h.eng.WithContext(ctx).UpdateFlow(flowID, expected, engine.FlowPatch{
		State: u.State, Wait: u.Wait, CurrentStep: u.CurrentStep, BlockedTaskID: u.BlockedTaskID, BlockedSummary: u.BlockedSummary,
	})
}

func (h *host) SetWaiting(ctx context.Context, flowID string, expected int64, w sdk.WaitRequest) (*sdk.Flow, error) {
	if err := h.owns(ctx, flowID); err != nil {
		return nil, err
	}
	return h.eng.WithContext(ctx).SetWaiting(flowID, expected, w)
}

func (h *host) Resume(ctx context.Context, flowID string, expected int64, r sdk.ResumeRequest) (*sdk.Flow, error) {
	if err := h.owns(ctx, flowID); err != nil {
		return nil, err
	}
	return h.eng.WithContext(ctx).Resume(flowID, expected, r)
}

func (h *host) Finish(ctx context.Context, flowID string, expected int64, e sdk.EndRequest) (*sdk.Flow, error) {
	if err := h.owns(ctx, flowID); err != nil {
		return nil, err
	}
	return h.eng.WithContext(ctx).Finish(flowID, expected, e)
}

func (h *host) Fail(ctx context.Context, flowID string, expected int64, e sdk.EndRequest) (*sdk.Flow, error) {
	if err := h.owns(ctx, flowID); err != nil {
		return nil, err
	}
	return h.eng.WithContext(ctx).Fail(flowID, expected, e)
}

func (h *host) RequestCancel(ctx context.Context, flowID string, expected int64) (*sdk.Flow, error) {
	if err := h.owns(ctx, flowID); err != nil {
		return nil, err
	}
	res, err := h.eng.WithContext(ctx).RequestCancel(flowID, expected)
	return res.Flow, err
}

func (h *host) CancelTask(ctx context.Context, taskID string) (*sdk.Task, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	t, err := h.eng.WithContext(ctx).GetTask(taskID)
	if err != nil {
		return nil, err
	}
	if _, err := h.own(ctx, t.FlowID); err != nil {
		return nil, err
	}
	t, err = h.eng.WithContext(ctx).CancelTask(taskID)
	return t.Public(), err
}

func (h *host) Continue(ctx context.Context, flowID string, req sdk.ContinueRequest) (*sdk.Flow, bool, error) {
	if _, err := h.own(ctx, flowID); err != nil {
		return nil, false, err
	}
	return h.eng.WithContext(ctx).ContinueFlow(flowID, req)
}

func (h *host) WakeAt(ctx context.Context, flowID string, at time.Time, key string) error {
	if _, err := h.own(ctx, flowID); err != nil {
		return err
	}
	_, err := h.eng.WithContext(ctx).SetWake(flowID, key, at)
	return err
}

func (h *host) KeepValue(ctx context.Context, flowID string, value []byte) (string, error) {
	if _, err := h.own(ctx, flowID); err != nil {
		return "", err
	}
	return h.eng.WithContext(ctx).Keep(flowID, value)
}

func (h *host) KeptValue(ctx context.Context, flowID, sum string) ([]byte, error) {
	if _, err := h.own(ctx, flowID); err != nil {
		return nil, err
	}
	return h.eng.WithContext(ctx).Kept(flowID, sum)
}

func (h *host) StoreValue(ctx context.Context, scope, key string, value []byte) error {
	if err := h.check(); err != nil {
		return err
	}
	return h.eng.WithContext(ctx).StoreValue(h.name, scope, key, value)
}

func (h *host) StoredValue(ctx context.Context, scope, key string) ([]byte, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	return h.eng.WithContext(ctx).StoredValue(h.name, scope, key)
}

func (h *host) Log(_ context.Context, level, msg string, fields map[string]string) error {
	if err := h.check(); err != nil {
		return err
	}
	h.log(level, msg, fields)
	return nil
}

// ListStages implements sdk.Host: the stages the gateway's plugins
// provide; none for a host made by NewHost.
func (h *host) ListStages(context.Context) ([]sdk.Stage, error) {
	if err := h.check(); err != nil {
		return nil, err
	}
	if h.stages == nil {
		return []sdk.Stage{}, nil
	}
	return h.stages.Stages(), nil
}

// RunStage implements sdk.Host for a flow the controller drives.
func (h *host) RunStage(ctx context.Context, call sdk.StageCall) (json.RawMessage, error) {
	if _, err := h.own(ctx, call.FlowID); err != nil {
		return nil, err
	}
	if h.stages == nil {
		return nil, fmt.Errorf("%w: pipeline stage %q: controller %s runs in process, where no plugin provides stages; run it under a gateway", sdk.ErrNotFound, call.Name, h.name)
	}
	return h.stages.RunStage(ctx, call)
}
