package runner_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// diedAfterCommit stands for a gateway that died between the commit that
// created a task running (engine.Starter) and the task's launch: it
// grants the slot and never launches.
type diedAfterCommit struct{}

func (diedAfterCommit) Reserve(string) (engine.StartInput, bool) { return engine.StartInput{}, true }
func (diedAfterCommit) Release()                                 {}
func (diedAfterCommit) Launch(*stored.Task, *stored.Task)        {}

// A task recorded running by its creating commit, whose gateway died
// before the launch, is an attempt that never ran: the next gateway runs
// it as attempt 2, once, as it does after a crash between StartTask and
// a launch.
func TestATaskStartedAtCreationWhoseLaunchDiedRunsOnce(t *testing.T) {
	t.Parallel()
	h := newHome(t, nil)
	h.eng().StartAtCreation(diedAfterCommit{})
	task, _, err := h.eng().CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: h.spec(`echo "$FLOWGATE_ATTEMPT" >> ran`)})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, task.Status)
	require.Equal(t, 1, task.Attempts)

	h.eng().StartAtCreation(h.gw.run)
	h.start()
	got := h.wait(task.ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
	require.Equal(t, 2, got.Attempts)
	require.Equal(t, []string{"2"}, h.lines("ran"))
	require.Len(t, got.Errors, 1)
	require.Contains(t, got.Errors[0], "attempt 1 did not run")
}

// A runner that has a slot free takes a task at its creation and runs
// it; one whose slots are full leaves the next queued, and starts it
// when a slot frees up.
func TestTheRunnerTakesATaskAtItsCreationWhenASlotIsFree(t *testing.T) {
	t.Parallel()
	h := startHome(t, func(c *runner.Config) { c.MaxRunning = 1 })
	long, _, err := h.eng().CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: h.spec("sleep 60")})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, long.Status, "started by its creating commit")
	next, _, err := h.eng().CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: h.spec("true")})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskQueued, next.Status, "no slot: it waits")
	_, err = h.eng().CancelTask(long.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskSucceeded, h.wait(next.ID).Status)
	require.Equal(t, sdk.TaskCancelled, h.wait(long.ID).Status)
}
