package pluginhost_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/sdk"
)

// seer is an in-process controller that records the events it is handed
// and, with folds, declares sdk.CapabilityFoldTaskFinished.
type seer struct {
	folds bool
	mu    sync.Mutex
	seen  []sdk.Event
}

func (c *seer) Info(context.Context) (sdk.Info, error) {
	info := sdk.Info{Name: "ctl", APIVersion: sdk.APIVersion}
	if c.folds {
		info.Capabilities = []string{sdk.CapabilityFoldTaskFinished}
	}
	return info, nil
}

func (c *seer) HandleEvent(_ context.Context, _ sdk.Host, ev sdk.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, ev)
	return nil
}

func (c *seer) Shutdown(context.Context) error { return nil }

func (c *seer) types() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, ev := range c.seen {
		out = append(out, fmt.Sprintf("%d %s", ev.Seq, ev.Type))
	}
	return out
}

// Five tasks of a flow that end together queue five task.finished
// events: a controller that folds them is handed the last one alone and
// all five leave the outbox with it; one that does not gets all five,
// in order. A cancel request queued after them is never folded.
func TestTaskFinishedEventsFoldForAControllerThatAsks(t *testing.T) {
	t.Parallel()
	for _, folds := range []bool{true, false} {
		t.Run(fmt.Sprintf("folds=%v", folds), func(t *testing.T) {
			t.Parallel()
			c := &seer{folds: folds}
			var h pluginhost.Handler
			eng, _, start := newDelivererAt(t, t.TempDir(), func(string) (pluginhost.Handler, error) { return h, nil }, pluginhost.DeliveryConfig{})
			h = pluginhost.InProcess(eng, "ctl", c, nil)
			f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "fan-out"})
			require.NoError(t, err)
			for i := range 5 {
				task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, OwnerKey: "o", IdempotencyKey: fmt.Sprint(i), Spec: sdk.TaskSpec{Shell: "true"}})
				require.NoError(t, err)
				_, err = eng.StartTask(task.ID, engine.StartInput{})
				require.NoError(t, err)
				_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded})
				require.NoError(t, err)
			}
			_, err = eng.CancelFlow(f.ID, "test")
			require.NoError(t, err)
			evs, err := eng.Events(f.ID)
			require.NoError(t, err)
			require.Len(t, evs, 7, "flow.started, five task.finished, flow.cancel_requested")

			start()
			polltest.Until(t, "the outbox emptied", func() bool { evs, err := eng.Events(f.ID); return err == nil && len(evs) == 0 })
			want := []string{"1 flow.started", "2 task.finished", "3 task.finished", "4 task.finished", "5 task.finished", "6 task.finished", "7 flow.cancel_requested"}
			if folds {
				want = []string{"1 flow.started", "6 task.finished", "7 flow.cancel_requested"}
			}
			require.Equal(t, want, c.types())
		})
	}
}
