package pluginhost_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// recorder is a Handler that records what it saw and answers with fn.
type recorder struct {
	mu   sync.Mutex
	seen []sdk.Event
	fn   func(ctx context.Context, ev sdk.Event) error
}

func (r *recorder) HandleEvent(ctx context.Context, ev sdk.Event) error {
	r.mu.Lock()
	r.seen = append(r.seen, ev)
	fn := r.fn
	r.mu.Unlock()
	if fn == nil {
		return nil
	}
	return fn(ctx, ev)
}

func (r *recorder) events() []sdk.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sdk.Event(nil), r.seen...)
}

func newDeliverer(t *testing.T, lookup func(string) (pluginhost.Handler, error), cfg pluginhost.DeliveryConfig) *engine.Engine {
	t.Helper()
	eng, _, start := newDelivererAt(t, t.TempDir(), lookup, cfg)
	start()
	return eng
}

// newDelivererAt is newDeliverer with the store in dir, returning the store
// and a function that starts the deliverer and returns it.
func newDelivererAt(t *testing.T, dir string, lookup func(string) (pluginhost.Handler, error), cfg pluginhost.DeliveryConfig) (*engine.Engine, *store.Bolt, func() *pluginhost.Deliverer) {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, "flowgate.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	cfg.Poll = 10 * time.Millisecond
	d := pluginhost.NewDeliverer(eng, lookup, cfg)
	eng.Listen("event delivery", d)
	return eng, st, func() *pluginhost.Deliverer {
		require.NoError(t, d.Start(context.Background()))
		t.Cleanup(func() { require.NoError(t, d.Stop(context.Background())) })
		return d
	}
}

func TestEventsArriveInOrderPerFlowAndAreRemovedOnAck(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	eng := newDeliverer(t, func(string) (pluginhost.Handler, error) { return rec, nil }, pluginhost.DeliveryConfig{})
	var flows []*sdk.Flow
	for i := 0; i < 3; i++ {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: fmt.Sprint("g", i)})
		require.NoError(t, err)
		f, err = eng.SetWaiting(f.ID, f.Revision, engine.WaitInput{})
		require.NoError(t, err)
		_, err = eng.Resume(f.ID, f.Revision, engine.ResumeInput{})
		require.NoError(t, err)
		flows = append(flows, f)
	}
	polltest.Until(t, "all events delivered", func() bool { return len(rec.events()) == 6 })
	perFlow := map[string][]sdk.EventType{}
	for _, ev := range rec.events() {
		perFlow[ev.FlowID] = append(perFlow[ev.FlowID], ev.Type)
	}
	for _, f := range flows {
		require.Equal(t, []sdk.EventType{sdk.EventFlowStarted, sdk.EventFlowResumed}, perFlow[f.ID])
		polltest.Until(t, "outbox empty", func() bool {
			evs, err := eng.Events(f.ID)
			require.NoError(t, err)
			return len(evs) == 0
		})
	}
}

func TestFailedDeliveryIsRetriedThenParkedAndUnparked(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	healthy := false
	rec := &recorder{fn: func(context.Context, sdk.Event) error {
		mu.Lock()
		defer mu.Unlock()
		if healthy {
			return nil
		}
		return errors.New("database unreachable")
	}}
	eng := newDeliverer(t, func(string) (pluginhost.Handler, error) { return rec, nil },
		pluginhost.DeliveryConfig{MaxFailures: 3, Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: "g"})
	require.NoError(t, err)

	polltest.Until(t, "flow blocked", func() bool {
		cur, err := eng.GetFlow(f.ID)
		require.NoError(t, err)
		return cur.Status == sdk.FlowBlocked
	})
	cur, err := eng.GetFlow(f.ID)
	require.NoError(t, err)
	require.Contains(t, cur.BlockedSummary, "controller ctl failed to handle flow.started")
	require.Contains(t, cur.BlockedSummary, "3 times: database unreachable")
	seen := rec.events()
	require.Len(t, seen, 3)
	for i, ev := range seen {
		require.Equal(t, i, ev.Deliveries, "the controller sees how often it failed before")
	}
	evs, err := eng.Events(f.ID)
	require.NoError(t, err)
	require.Len(t, evs, 1, "a parked event is kept, never dropped")
	require.True(t, evs[0].Parked)

	mu.Lock()
	healthy = true
	mu.Unlock()
	_, err = eng.UpdateFlow(f.ID, cur.Revision, engine.FlowPatch{Status: sdk.FlowRunning})
	require.NoError(t, err)
	polltest.Until(t, "delivered after unblock", func() bool {
		evs, err := eng.Events(f.ID)
		require.NoError(t, err)
		return len(evs) == 0
	})
	seen = rec.events()
	require.Len(t, seen, 5)
	require.Equal(t, sdk.EventFlowStarted, seen[3].Type, "the parked event comes first once unblocked")
	require.Equal(t, 0, seen[3].Deliveries, "its failure count starts again")
	require.Equal(t, sdk.EventFlowResumed, seen[4].Type)
}

func TestSilentControllerAndMissingControllerBlockTheFlow(t *testing.T) {
	t.Parallel()
	silent := &recorder{fn: func(ctx context.Context, _ sdk.Event) error { <-ctx.Done(); return ctx.Err() }}
	eng := newDeliverer(t, func(name string) (pluginhost.Handler, error) {
		if name == "silent" {
			return silent, nil
		}
		return nil, fmt.Errorf("controller %s is not running", name)
	}, pluginhost.DeliveryConfig{MaxFailures: 2, Timeout: 20 * time.Millisecond, Backoff: time.Millisecond})

	for name, want := range map[string]string{"silent": "no answer within 20ms", "ghost": "controller ghost is not running"} {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: name, Goal: "g"})
		require.NoError(t, err)
		polltest.Until(t, name+" blocked", func() bool {
			cur, err := eng.GetFlow(f.ID)
			require.NoError(t, err)
			return cur.Status == sdk.FlowBlocked
		})
		cur, err := eng.GetFlow(f.ID)
		require.NoError(t, err)
		require.Contains(t, cur.BlockedSummary, want, name)
	}
}
