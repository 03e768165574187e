package pluginhost

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/flowgate/flowgate/sdk"
)

// relay is the host of a plugin process started before the supervisor
// that runs it: a plugins_dir file, started once to learn its name (see
// FindDir). Its Setup needs a host before the name is known, so the
// process is served the relay, which passes every call to the host it is
// bound to: first one that refuses every call (as a probe's does), then
// the instance's host once the supervisor adopts the process.
type relay struct {
	to atomic.Pointer[boundHost]
}

// boundHost holds the host a relay passes calls to.
type boundHost struct{ sdk.Host }

var _ sdk.Host = (*relay)(nil)

// newRelay returns a relay bound to h.
func newRelay(h sdk.Host) *relay {
	r := &relay{}
	r.bind(h)
	return r
}

// bind passes every later call to h.
func (r *relay) bind(h sdk.Host) { r.to.Store(&boundHost{h}) }

func (r *relay) h() sdk.Host { return r.to.Load().Host }

func (r *relay) CreateFlow(ctx context.Context, req sdk.FlowRequest) (*sdk.Flow, bool, error) {
	return r.h().CreateFlow(ctx, req)
}

func (r *relay) GetFlow(ctx context.Context, flowID string) (*sdk.Flow, error) {
	return r.h().GetFlow(ctx, flowID)
}

func (r *relay) ListTasks(ctx context.Context, flowID string) ([]*sdk.Task, error) {
	return r.h().ListTasks(ctx, flowID)
}

func (r *relay) CreateTask(ctx context.Context, req sdk.TaskRequest) (*sdk.Task, bool, error) {
	return r.h().CreateTask(ctx, req)
}

func (r *relay) UpdateFlow(ctx context.Context, flowID string, expected int64, u sdk.FlowUpdate) (*sdk.Flow, error) {
	return r.h().UpdateFlow(ctx, flowID, expected, u)
}

func (r *relay) Advance(ctx context.Context, flowID string, expected int64, a sdk.AdvanceRequest) (sdk.AdvanceResult, error) {
	return r.h().Advance(ctx, flowID, expected, a)
}

func (r *relay) SetWaiting(ctx context.Context, flowID string, expected int64, w sdk.WaitRequest) (*sdk.Flow, error) {
	return r.h().SetWaiting(ctx, flowID, expected, w)
}

func (r *relay) Resume(ctx context.Context, flowID string, expected int64, res sdk.ResumeRequest) (*sdk.Flow, error) {
	return r.h().Resume(ctx, flowID, expected, res)
}

func (r *relay) Finish(ctx context.Context, flowID string, expected int64, e sdk.EndRequest) (*sdk.Flow, error) {
	return r.h().Finish(ctx, flowID, expected, e)
}

func (r *relay) Fail(ctx context.Context, flowID string, expected int64, e sdk.EndRequest) (*sdk.Flow, error) {
	return r.h().Fail(ctx, flowID, expected, e)
}

func (r *relay) RequestCancel(ctx context.Context, flowID string, expected int64) (*sdk.Flow, error) {
	return r.h().RequestCancel(ctx, flowID, expected)
}

func (r *relay) CancelTask(ctx context.Context, taskID string) (*sdk.Task, error) {
	return r.h().CancelTask(ctx, taskID)
}

func (r *relay) Continue(ctx context.Context, flowID string, req sdk.ContinueRequest) (*sdk.Flow, bool, error) {
	return r.h().Continue(ctx, flowID, req)
}

func (r *relay) WakeAt(ctx context.Context, flowID string, at time.Time, key string) error {
	return r.h().WakeAt(ctx, flowID, at, key)
}

func (r *relay) KeepValue(ctx context.Context, flowID string, value []byte) (string, error) {
	return r.h().KeepValue(ctx, flowID, value)
}

func (r *relay) KeptValue(ctx context.Context, flowID, sum string) ([]byte, error) {
	return r.h().KeptValue(ctx, flowID, sum)
}

func (r *relay) StoreValue(ctx context.Context, scope, key string, value []byte) error {
	return r.h().StoreValue(ctx, scope, key, value)
}

func (r *relay) StoredValue(ctx context.Context, scope, key string) ([]byte, error) {
	return r.h().StoredValue(ctx, scope, key)
}

func (r *relay) Log(ctx context.Context, level, msg string, fields map[string]string) error {
	return r.h().Log(ctx, level, msg, fields)
}

func (r *relay) ListStages(ctx context.Context) ([]sdk.Stage, error) { return r.h().ListStages(ctx) }

func (r *relay) RunStage(ctx context.Context, call sdk.StageCall) (json.RawMessage, error) {
	return r.h().RunStage(ctx, call)
}
