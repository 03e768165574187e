package sdktest

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/flowgate/flowgate/sdk"
)

// HostFixture is one implementation of sdk.Host under test, with the
// gateway's side the conformance cases need to set a flow up and drive its
// tasks. Every function must be set.
type HostFixture struct {
	// Host is the sdk.Host under test, as the controller that drives the
	// flows CreateFlow makes sees it.
	Host sdk.Host
	// CreateFlow makes a managed flow of that controller with goal and
	// state (nil leaves it absent): queued, with flow.started in its
	// outbox.
	CreateFlow func(goal string, state json.RawMessage) (*sdk.Flow, error)
	// StartTask moves a queued task to running, as the runner does when it
	// starts the process.
	StartTask func(taskID string) error
	// FinishTask ends a running task in a terminal status with result, as
	// the runner does when the process ends.
	FinishTask func(taskID string, status sdk.TaskStatus, result sdk.Result) error
	// Events returns the flow's unacknowledged events, oldest first.
	Events func(flowID string) ([]sdk.Event, error)
	// FireWakes fires the wakes due now, as the gateway does when its
	// clock reaches them.
	FireWakes func() error
	// MaxActiveFlows is the cap Host applies to the active flows its
	// controller created, in CreateFlow (the gateway's max_active_flows): keep it small,
	// since the CreateFlowCap case creates that many flows.
	MaxActiveFlows int
}

// RunHostConformance runs the sdk.Host contract as subtests against the
// implementation newHost makes, a fresh one per subtest: every Host
// method, revision conflicts carrying the current flow, refusals with
// sdk.ErrTerminal, sdk.ErrNotFound, sdk.ErrCancelRequested and
// sdk.ErrInvalid, idempotency keys (of tasks and of flows a controller
// creates), the cap on active flows, cancel requests, wakes, stages, and the
// events each change queues. The gateway's hosts (in-process and over gRPC) and Host
// all pass it; an implementation that passes behaves for a controller as
// the gateway does. Revisions are checked relative to the revision read:
// every write bumps it by one, and a refused or empty write leaves it.
func RunHostConformance(t *testing.T, newHost func(t *testing.T) HostFixture) {
	for _, c := range conformanceCases {
		t.Run(c.name, func(t *testing.T) {
			c.run(&conformance{T: t, fx: newHost(t), ctx: t.Context()})
		})
	}
}

// conformanceCase is one subtest of RunHostConformance.
type conformanceCase struct {
	name string
	run  func(c *conformance)
}

// conformanceCases lists every case, flows first. Read-only.
var conformanceCases = []conformanceCase{
	{"CreateFlow", testCreateFlow},
	{"CreateFlowCap", testCreateFlowCap},
	{"GetFlow", testGetFlow},
	{"UpdateFlow", testUpdateFlow},
	{"RevisionConflict", testRevisionConflict},
	{"SetWaiting", testSetWaiting},
	{"Resume", testResume},
	{"FinishAndFail", testFinishAndFail},
	{"Terminal", testTerminal},
	{"Continue", testContinue},
	{"RequestCancel", testRequestCancel},
	{"RequestCancelWithTasks", testRequestCancelWithTasks},
	{"CreateTask", testCreateTask},
	{"IdempotencyKey", testIdempotencyKey},
	{"Advance", testAdvance},
	{"AdvanceRefused", testAdvanceRefused},
	{"AdvanceAcks", testAdvanceAcks},
	{"ListTasks", testListTasks},
	{"FinishedTask", testFinishedTask},
	{"CancelTask", testCancelTask},
	{"Log", testLog},
	{"WakeAt", testWakeAt},
	{"KeepValue", testKeepValue},
	{"StoreValue", testStoreValue},
	{"Stages", testStages},
}

// conformance is the state of one case: the test, the fixture and the
// helpers that fail the test on an unexpected error.
type conformance struct {
	*testing.T
	fx  HostFixture
	ctx context.Context
}

// ok fails the test if err is not nil.
func (c *conformance) ok(err error, what string) {
	c.Helper()
	if err != nil {
		c.Fatalf("%s: %v", what, err)
	}
}

// refused fails the test unless err matches want.
func (c *conformance) refused(err, want error, what string) {
	c.Helper()
	if !errors.Is(err, want) {
		c.Fatalf("%s: got error %v, want one matching %q", what, err, want)
	}
}

// flow makes a flow with state {"a":1} and checks its outbox.
func (c *conformance) flow() *sdk.Flow {
	c.Helper()
	f, err := c.fx.CreateFlow("conformance", json.RawMessage(`{"a":1}`))
	c.ok(err, "create a flow")
	c.events(f.ID, "flow.started")
	return f
}

// get reads flow id.
func (c *conformance) get(id string) *sdk.Flow {
	c.Helper()
	f, err := c.fx.Host.GetFlow(c.ctx, id)
	c.ok(err, "GetFlow")
	return f
}

// task creates a task without a key in flow f.
func (c *conformance) task(f *sdk.Flow, label string) *sdk.Task {
	c.Helper()
	t, created, err := c.fx.Host.CreateTask(c.ctx, sdk.TaskRequest{FlowID: f.ID, Label: label, Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	c.ok(err, "CreateTask "+label)
	if !created {
		c.Fatalf("CreateTask %s without a key returned an existing task %s", label, t.ID)
	}
	return t
}

// tasks lists the tasks of flow f.
func (c *conformance) tasks(f *sdk.Flow) []*sdk.Task {
	c.Helper()
	tasks, err := c.fx.Host.ListTasks(c.ctx, f.ID)
	c.ok(err, "ListTasks")
	return tasks
}

// events fails the test unless flow id's outbox holds exactly want, each
// event written as its type, followed for an event whose data has a
// status by a space and that status ("task.finished cancelled").
func (c *conformance) events(id string, want ...string) {
	c.Helper()
	evs, err := c.fx.Events(id)
	c.ok(err, "read the outbox")
	got := []string{}
	for _, ev := range evs {
		s := string(ev.Type)
		var data struct {
			Status string `json:"status"`
		}
		if len(ev.Data) > 0 && json.Unmarshal(ev.Data, &data) == nil && data.Status != "" {
			s += " " + data.Status
		}
		got = append(got, s)
	}
	if want == nil {
		want = []string{}
	}
	if !reflect.DeepEqual(got, want) {
		c.Fatalf("flow %s has events %q, want %q", id, got, want)
	}
}

// bumped fails the test unless after is before's flow written once more.
func (c *conformance) bumped(before, after *sdk.Flow, what string) {
	c.Helper()
	if after.ID != before.ID || after.Revision != before.Revision+1 {
		c.Fatalf("%s: flow %s is at revision %d, want %d (one write after %d)", what, after.ID, after.Revision, before.Revision+1, before.Revision)
	}
}

// same fails the test unless got is want, value for value.
func (c *conformance) same(got, want any, what string) {
	c.Helper()
	if !reflect.DeepEqual(got, want) {
		c.Fatalf("%s: got %#v, want %#v", what, got, want)
	}
}

// sameJSON fails the test unless got and want are the same JSON value.
func (c *conformance) sameJSON(got json.RawMessage, want, what string) {
	c.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		c.Fatalf("%s: %q is not JSON: %v", what, got, err)
	}
	c.ok(json.Unmarshal([]byte(want), &w), what)
	c.same(g, w, what)
}
