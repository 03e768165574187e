package pluginhost_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// A controller never receives the runner's fields of a task (pids, the
// member that runs it, progress offset, …), in process or over the gRPC
// host a plugin is handed, although the stored record has every one of
// them: ListTasks, CreateTask (an existing task by its key), CancelTask
// and Advance all hand out the public sdk.Task.
func TestControllerReceivesNoRunnerField(t *testing.T) {
	t.Parallel()
	hosts := map[string]func(*engine.Engine) sdk.Host{
		"in-process": func(eng *engine.Engine) sdk.Host { return pluginhost.NewHost(eng, conformanceController, nil) },
		"grpc": func(eng *engine.Engine) sdk.Host {
			return sdktest.WireHost(t, pluginhost.NewHost(eng, conformanceController, nil))
		},
	}
	for name, newHost := range hosts {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			eng := conformanceEngine(t)
			f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "me", ControllerID: conformanceController, Goal: "run one", NotifyTo: []string{"https://example.test/hook"}})
			require.NoError(t, err)
			spec := sdk.TaskSpec{Argv: []string{"true"}, NotifyOnMilestone: []string{"built"}}
			task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, OwnerKey: "me", IdempotencyKey: "k", Spec: spec})
			require.NoError(t, err)
			rec := withEveryRunnerField(t, eng, task.ID)

			h := newHost(eng)
			ctx := context.Background()
			listed, err := h.ListTasks(ctx, f.ID)
			require.NoError(t, err)
			require.Len(t, listed, 1)
			requirePublic(t, rec, listed[0], "ListTasks")
			again, created, err := h.CreateTask(ctx, sdk.TaskRequest{FlowID: f.ID, IdempotencyKey: "k", Spec: spec})
			require.NoError(t, err)
			require.False(t, created)
			requirePublic(t, rec, again, "CreateTask")

			f, err = eng.GetFlow(f.ID)
			require.NoError(t, err)
			adv, err := h.Advance(ctx, f.ID, f.Revision, sdk.AdvanceRequest{Tasks: []sdk.TaskRequest{{FlowID: f.ID, IdempotencyKey: "k", Spec: spec}}})
			require.NoError(t, err)
			require.Len(t, adv.Tasks, 1)
			requirePublic(t, rec, adv.Tasks[0], "Advance")

			cancelled, err := h.CancelTask(ctx, task.ID)
			require.NoError(t, err)
			require.True(t, cancelled.CancelRequested())
			requirePublic(t, nil, cancelled, "CancelTask")
		})
	}
}

// withEveryRunnerField runs task id's attempts through the engine until
// its record holds every field stored.Task adds to sdk.Task, and returns
// that record.
func withEveryRunnerField(t *testing.T, eng *engine.Engine, id string) *stored.Task {
	t.Helper()
	_, err := eng.StartTask(id, engine.StartInput{Gateway: "box.4242"})
	require.NoError(t, err)
	_, err = eng.RequeueTask(id, engine.RequeueInput{Attempt: 1, InPlace: true, Error: "start failed", Gateway: "box.4242"})
	require.NoError(t, err)
	_, err = eng.StartTask(id, engine.StartInput{Gateway: "box.4242", Boot: "a-boot", PID: 4711, PIDStartTime: 2, ShimPID: 4710, ShimStartTime: 1})
	require.NoError(t, err)
	rec, err := eng.RecordProgress(id, engine.ProgressInput{From: 0, To: 64, Malformed: 1, Milestones: []sdk.Milestone{{Name: "built"}}})
	require.NoError(t, err)
	v := reflect.ValueOf(*rec)
	for i := range v.NumField() {
		if f := v.Type().Field(i); !f.Anonymous {
			require.False(t, v.Field(i).IsZero(), "the stored record has no %s to leave out", f.Name)
		}
	}
	return rec
}

// requirePublic fails unless task, as call returned it, carries none of
// the runner's fields in its JSON and, when rec is given, is the record's
// public part.
func requirePublic(t *testing.T, rec *stored.Task, task *sdk.Task, call string) {
	t.Helper()
	b, err := json.Marshal(task)
	require.NoError(t, err)
	var keys map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &keys))
	own := reflect.TypeFor[stored.Task]()
	for i := range own.NumField() {
		if f := own.Field(i); !f.Anonymous {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			require.NotContains(t, keys, name, "%s handed the controller the runner's field %s", call, name)
		}
	}
	if rec != nil {
		want, err := json.Marshal(rec.Public())
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(b), "%s handed the controller the record's public part", call)
	}
}
