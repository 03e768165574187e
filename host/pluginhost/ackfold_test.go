package pluginhost_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// advancer is a controller that answers every event with one Advance
// that acknowledges it (AckSeq), as the pipeline controller does a step.
type advancer struct{}

func (advancer) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "ctl", APIVersion: sdk.APIVersion}, nil
}

func (advancer) Shutdown(context.Context) error { return nil }

func (advancer) HandleEvent(ctx context.Context, h sdk.Host, ev sdk.Event) error {
	f, err := h.GetFlow(ctx, ev.FlowID)
	if err != nil {
		return err
	}
	_, err = h.Advance(ctx, f.ID, f.Revision, sdk.AdvanceRequest{
		Tasks:  []sdk.TaskRequest{{IdempotencyKey: f.ID + ":step", Spec: sdk.TaskSpec{Shell: "true"}}},
		AckSeq: ev.Seq,
	})
	return err
}

// An event whose controller acknowledges it with its Advance costs no
// commit of its own: the delivery writes nothing after HandleEvent.
func TestDeliveryOfAnEventAckedByItsAdvanceWritesNothing(t *testing.T) {
	t.Parallel()
	var commits atomic.Int64
	st, err := store.Open(filepath.Join(t.TempDir(), "flowgate.db"), store.Options{OnCommit: func(time.Duration) { commits.Add(1) }})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	h := pluginhost.InProcess(eng, "ctl", advancer{}, nil)
	obs := &observed{delivered: map[string]int{}, failed: map[string]int{}}
	d := pluginhost.NewDeliverer(eng, func(string) (pluginhost.Handler, error) { return h, nil },
		pluginhost.DeliveryConfig{Poll: 10 * time.Millisecond, Observer: obs})
	eng.Listen("event delivery", d)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)

	before := commits.Load()
	require.NoError(t, d.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, d.Stop(context.Background())) })
	polltest.Until(t, "flow.started delivered", func() bool { n, _ := obs.counts(); return n == 1 })
	require.Equal(t, int64(1), commits.Load()-before, "writes of one delivered step: the Advance alone")
	evs, err := eng.Events(f.ID)
	require.NoError(t, err)
	require.Empty(t, evs)
	tasks, err := eng.FlowTasks(f.ID)
	require.NoError(t, err)
	require.Len(t, tasks, 1)
}
