package sdktest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

func TestRunFetcherSucceeds(t *testing.T) {
	sdktest.Run(t, fetcher{}, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("fetch the report", map[string]int{"n": 1})
		require.Equal(t, "fetcher", f.ControllerID)
		require.Equal(t, "fetch", f.CurrentStep)
		require.JSONEq(t, `{"n":1}`, string(f.State))
		tasks := h.Tasks(f.ID)
		require.Len(t, tasks, 1)
		require.Equal(t, sdk.TaskQueued, tasks[0].Status)

		task := h.FinishTask(tasks[0].ID, sdk.TaskSucceeded)
		require.Equal(t, sdk.TaskSucceeded, task.Status)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status)
		require.Equal(t, "done", f.CurrentStep)
		require.Empty(t, h.Host().Events(f.ID))
	})
}

func TestRunFetcherFails(t *testing.T) {
	sdktest.Run(t, fetcher{}, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("fetch the report", nil)
		require.Nil(t, f.State)
		task := h.Tasks(f.ID)[0]
		h.FinishTask(task.ID, sdk.TaskTimedOut)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowFailed, f.Status)
		require.Equal(t, task.ID, f.BlockedTaskID)
		require.Equal(t, "fetch timed_out", f.BlockedSummary)
	})
}

// Events arrive at least once: the controller's idempotency keys and
// revision checks make a second delivery harmless.
func TestRunRedelivery(t *testing.T) {
	sdktest.Run(t, fetcher{}, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("fetch the report", nil)
		started := sdk.Event{FlowID: f.ID, Seq: 1, Type: sdk.EventFlowStarted}
		require.NoError(t, h.Deliver(started))
		require.Len(t, h.Tasks(f.ID), 1, "the idempotency key returns the first task")

		task := h.FinishTask(h.Tasks(f.ID)[0].ID, sdk.TaskSucceeded)
		finished := sdk.Event{FlowID: f.ID, Seq: 2, Type: sdk.EventTaskFinished, TaskID: task.ID}
		require.NoError(t, h.Deliver(finished))
		require.Equal(t, sdk.FlowSucceeded, h.Flow(f.ID).Status)
	})
}

func TestRunCancel(t *testing.T) {
	sdktest.Run(t, fetcher{}, func(t *testing.T, h *sdktest.Harness) {
		f := h.StartFlow("fetch the report", nil)
		task := h.Tasks(f.ID)[0]
		_, err := h.Host().StartTask(task.ID)
		require.NoError(t, err)

		f, err = h.Host().RequestCancel(context.Background(), f.ID, f.Revision)
		require.NoError(t, err)
		require.True(t, f.CancelRequested())
		require.Equal(t, sdk.FlowQueued, f.Status, "a running task keeps the flow alive")
		h.Drain(f.ID)

		h.FinishTask(task.ID, sdk.TaskCancelled)
		require.Equal(t, sdk.FlowCancelled, h.Flow(f.ID).Status)
	})
}

// A controller error reaches the test through Deliver, with its sentinel.
func TestRunDeliverError(t *testing.T) {
	sdktest.Run(t, fetcher{}, func(t *testing.T, h *sdktest.Harness) {
		err := h.Deliver(sdk.Event{FlowID: "flow-missing", Seq: 1, Type: sdk.EventFlowStarted})
		require.ErrorIs(t, err, sdk.ErrNotFound)
	})
}

// shutdownFails is a controller whose Shutdown fails; the harness reports
// it at the end of the test.
type shutdownFails struct{ fetcher }

func (shutdownFails) Shutdown(context.Context) error { return errors.New("boom") }

func TestHarnessReportsShutdown(t *testing.T) {
	ft := &fakeT{T: t}
	ft.run(func() { sdktest.New(ft, shutdownFails{}) })
	require.Len(t, ft.errors, 1)
	require.Contains(t, ft.errors[0], "boom")
}

// fakeT is a testing.TB that records Errorf and runs cleanups on demand.
type fakeT struct {
	*testing.T
	errors   []string
	cleanups []func()
}

func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func (f *fakeT) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }

func (f *fakeT) run(fn func()) {
	fn()
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}
