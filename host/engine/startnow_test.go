package engine_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// slots is an engine.Starter with a number of free slots: it records
// what the engine reserved, gave back and handed over.
type slots struct {
	mu       sync.Mutex
	free     int
	asked    int
	released int
	launched []handed
}

type handed struct{ queued, started *stored.Task }

func (s *slots) Reserve(on string) (engine.StartInput, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked++
	if s.free == 0 {
		return engine.StartInput{}, false
	}
	s.free--
	return engine.StartInput{Gateway: "g1"}, true
}

func (s *slots) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free++
	s.released++
}

func (s *slots) Launch(queued, started *stored.Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.launched = append(s.launched, handed{queued, started})
}

func (s *slots) state() (free, asked, released int, launched []handed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.free, s.asked, s.released, append([]handed(nil), s.launched...)
}

// A task created while its runner has a slot free and none waits is
// started by the commit that creates it: one commit, not two, and the
// runner gets it when that commit is done. Its history still tells the
// creation and the start.
func TestATaskCreatedWithASlotFreeStartsInItsCreatingCommit(t *testing.T) {
	t.Parallel()
	eng, commits := countingEngine(t)
	s := &slots{free: 1}
	eng.StartAtCreation(s)

	before := commits.Load()
	task, created, err := eng.WithContext(t.Context()).CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, int64(1), commits.Load()-before, "commits of a task's creation and start")
	require.Equal(t, sdk.TaskRunning, task.Status)
	require.Equal(t, 1, task.Attempts)
	require.Equal(t, "g1", task.Gateway)
	require.Equal(t, task.CreatedAt, task.StartedAt)

	free, _, released, launched := s.state()
	require.Zero(t, free, "the slot is the task's")
	require.Zero(t, released)
	require.Len(t, launched, 1)
	require.Equal(t, sdk.TaskQueued, launched[0].queued.Status, "the task as it would have waited")
	require.Zero(t, launched[0].queued.Attempts)
	require.Equal(t, task.FlowID, launched[0].queued.FlowID)
	require.Equal(t, task.ID, launched[0].started.ID)
	require.Equal(t, sdk.TaskRunning, launched[0].started.Status)

	stored, err := eng.GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, stored.Status)
	flow, err := eng.GetFlow(task.FlowID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowRunning, flow.Status, "its mirror flow runs")

	page, err := eng.History(task.FlowID, 0, 100)
	require.NoError(t, err)
	var kinds []engine.HistoryKind
	for _, e := range page.Entries {
		if e.TaskID == task.ID {
			kinds = append(kinds, e.Kind)
		}
	}
	require.Equal(t, []engine.HistoryKind{engine.HistoryTaskCreated, engine.HistoryTaskStarted}, kinds)
}

// The mirror flow of a task started at its creation tells, in its
// history and to a state_changes receiver, that it was created queued
// and started, as it did when the start was a write of its own.
func TestAMirrorStartedAtCreationTellsItsStart(t *testing.T) {
	t.Parallel()
	eng := newEngine(t).WithContext(t.Context())
	eng.StartAtCreation(&slots{free: 1})
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true",
		NotifyPolicy: sdk.NotifyStateChanges, NotifyTo: []string{"http://127.0.0.1:9/hook"}}})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, task.Status)

	page, err := eng.History(task.FlowID, 0, 100)
	require.NoError(t, err)
	var flowKinds []string
	for _, e := range page.Entries {
		if e.TaskID == "" {
			flowKinds = append(flowKinds, string(e.Kind)+": "+e.Summary)
		}
	}
	require.Len(t, flowKinds, 2)
	require.Contains(t, flowKinds[0], "created queued")
	require.Contains(t, flowKinds[1], "queued → running")

	due, err := eng.DueNotices(time.Now().Add(time.Hour), 0)
	require.NoError(t, err)
	var statuses []string
	for _, n := range due {
		if n.FlowID == task.FlowID {
			statuses = append(statuses, n.Status)
		}
	}
	require.Equal(t, []string{"running"}, statuses, "the receiver hears of the start")
}

// Tasks start in the order they were queued: while one waits, a task
// created after it waits too, even with a slot free, and the runner is
// not asked. Without a slot, a task is created queued as before.
func TestATaskCreatedWhileAnotherWaitsWaitsBehindIt(t *testing.T) {
	t.Parallel()
	eng := newEngine(t).WithContext(t.Context())
	s := &slots{}
	eng.StartAtCreation(s)
	first, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskQueued, first.Status, "no slot was free")
	_, asked, _, _ := s.state()
	require.Equal(t, 1, asked)

	s.Release() // a slot frees up
	second, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskQueued, second.Status, "the first waits: the second waits behind it")
	free, asked, _, launched := s.state()
	require.Equal(t, 1, asked, "the runner is not asked while a task waits")
	require.Equal(t, 1, free)
	require.Empty(t, launched)

	// A task that runs nothing (a controller's record) is never started.
	eng2 := newEngine(t).WithContext(t.Context())
	s2 := &slots{free: 1}
	eng2.StartAtCreation(s2)
	f := createFlow(t, eng2)
	rec, _, err := eng2.CreateTask(engine.CreateTaskInput{FlowID: f.ID, Runtime: "ctl", Label: "note"})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskQueued, rec.Status)
	_, asked, _, _ = s2.state()
	require.Zero(t, asked)
}

// A step that creates more tasks than there are slots starts those it
// has slots for in its commit and queues the rest, in order.
func TestAnAdvanceStartsWhatHasSlotsAndQueuesTheRest(t *testing.T) {
	t.Parallel()
	eng := newEngine(t).WithContext(t.Context())
	s := &slots{free: 2}
	eng.StartAtCreation(s)
	f := createFlow(t, eng)
	step := "fan"
	res, err := eng.Advance(f.ID, f.Revision, sdk.FlowUpdate{CurrentStep: &step, State: json.RawMessage(`{"at":"fan"}`)}, advanceTasks(f, "a", "b", "c"), 0)
	require.NoError(t, err)
	var statuses []sdk.TaskStatus
	for _, task := range res.Tasks {
		statuses = append(statuses, task.Status)
	}
	require.Equal(t, []sdk.TaskStatus{sdk.TaskRunning, sdk.TaskRunning, sdk.TaskQueued}, statuses)
	free, _, released, launched := s.state()
	require.Zero(t, free)
	require.Zero(t, released)
	require.Len(t, launched, 2)
	require.Equal(t, res.Tasks[0].ID, launched[0].started.ID)
	require.Equal(t, res.Tasks[1].ID, launched[1].started.ID)
	tasks, err := eng.FlowTasks(f.ID)
	require.NoError(t, err)
	for i, task := range tasks {
		require.Equal(t, statuses[i], task.Status, "task %s as stored", task.Label)
	}
}

// A write that fails after it took a slot gives the slot back and hands
// the runner nothing: the task it would have started does not exist.
func TestAFailedCreationGivesItsSlotBack(t *testing.T) {
	t.Parallel()
	eng := newEngine(t).WithContext(t.Context())
	other := createFlow(t, eng)
	_, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: other.ID, IdempotencyKey: "taken", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	_, err = eng.StartTask(mustOnlyTask(t, eng, other.ID), engine.StartInput{})
	require.NoError(t, err)

	s := &slots{free: 1}
	eng.StartAtCreation(s)
	f := createFlow(t, eng)
	in := append(advanceTasks(f, "first"), engine.CreateTaskInput{FlowID: f.ID, IdempotencyKey: "taken", Spec: sdk.TaskSpec{Shell: "true"}})
	_, err = eng.Advance(f.ID, f.Revision, sdk.FlowUpdate{}, in, 0)
	require.ErrorContains(t, err, "already belongs to task")
	free, asked, released, launched := s.state()
	require.Equal(t, 1, asked, "the first task took the slot")
	require.Equal(t, 1, released, "and gave it back")
	require.Equal(t, 1, free)
	require.Empty(t, launched)
	tasks, err := eng.FlowTasks(f.ID)
	require.NoError(t, err)
	require.Empty(t, tasks)
}

func mustOnlyTask(t *testing.T, eng *engine.Engine, flowID string) string {
	t.Helper()
	tasks, err := eng.FlowTasks(flowID)
	require.NoError(t, err)
	require.Len(t, tasks, 1)
	return tasks[0].ID
}
