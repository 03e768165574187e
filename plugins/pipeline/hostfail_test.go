package pipeline_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// flakyStore is the pipeline controller under a Host whose store fails
// to read kept values back while down is set, as etcd without a leader
// does.
type flakyStore struct {
	sdk.Controller
	down atomic.Bool
}

func (c *flakyStore) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	return c.Controller.HandleEvent(ctx, &flakyHost{Host: h, c: c}, ev)
}

type flakyHost struct {
	sdk.Host
	c *flakyStore
}

func (h *flakyHost) KeptValue(ctx context.Context, flowID, sum string) ([]byte, error) {
	if h.c.down.Load() {
		return nil, fmt.Errorf("%w: etcd has no leader", sdk.ErrUnavailable)
	}
	return h.Host.KeptValue(ctx, flowID, sum)
}

// A store that fails to read a kept result back ends the pass with the
// error, so that its event comes again; it does not fail the flow, which
// succeeds once the store answers.
func TestAStoreThatFailsToReadEndsThePassNotTheFlow(t *testing.T) {
	t.Parallel()
	c := &flakyStore{Controller: pipeline.NewWithOptions(pipeline.Options{DataDir: t.TempDir(), SharedStore: true})}
	run := &runner{}
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f := deliverWhileDown(t, h, c, run, "big-inline.lobster", 3, strings.Repeat("y", 260000)+"\n")
		require.Equal(t, sdk.FlowRunning, h.Flow(f.ID).Status, h.Flow(f.ID).BlockedSummary)

		c.down.Store(false)
		h.Drain(f.ID)
		require.Equal(t, sdk.FlowSucceeded, h.Flow(f.ID).Status, h.Flow(f.ID).BlockedSummary)
	})
}

// A sub-workflow whose results cannot be read back because the store
// failed does not fail its step, even one whose on_error would carry the
// flow on: the pass ends with the error, and the step succeeds once the
// store answers.
func TestAStoreThatFailsToReadFailsNoStep(t *testing.T) {
	t.Parallel()
	c := &flakyStore{Controller: pipeline.NewWithOptions(pipeline.Options{DataDir: t.TempDir(), SharedStore: true})}
	run := &runner{}
	sdktest.Run(t, c, func(t *testing.T, h *sdktest.Harness) {
		f := deliverWhileDown(t, h, c, run, "big-nested.lobster", 2, strings.Repeat("x", 250000)+"\n")
		_, raw := readState(t, h.Flow(f.ID))
		require.NotContains(t, string(raw["results"]), `"nested"`, "the step is not recorded failed")

		c.down.Store(false)
		h.Drain(f.ID)
		run.next(t, h, f.ID)
		f = h.Flow(f.ID)
		require.Equal(t, sdk.FlowSucceeded, f.Status, f.BlockedSummary)
		st, _ := readState(t, f)
		require.NotContains(t, string(st.Results["nested"]), "failed")
	})
}

// deliverWhileDown starts workflow file, runs its first steps tasks,
// ends the next one succeeded printing stdout, and delivers that end's
// event while c's store is down: the pass must end on the store's error.
// It returns the flow; the store stays down.
func deliverWhileDown(t *testing.T, h *sdktest.Harness, c *flakyStore, run *runner, file string, steps int, stdout string) *sdk.Flow {
	t.Helper()
	f, _ := start(t, h, file, nil)
	for range steps {
		run.next(t, h, f.ID)
	}
	last := active(t, h, f.ID)
	_, err := h.Host().FinishTask(last.ID, sdk.TaskSucceeded, run.result(t, last, stdout))
	require.NoError(t, err)
	evs := h.Host().Events(f.ID)
	require.NotEmpty(t, evs)
	c.down.Store(true)
	require.ErrorIs(t, h.Deliver(evs[0]), sdk.ErrUnavailable, "the pass ends on the store's error")
	return f
}
