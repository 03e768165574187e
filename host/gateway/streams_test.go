package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/host/store/etcd/etcdtest"
	"github.com/flowgate/flowgate/sdk"
)

// ledgerController is the controller "ledger" of one gateway: it asks
// first (if set), then writes every event first let through into a
// ledger shared by every gateway of the test, under its gateway's name,
// and acknowledges it.
type ledgerController struct {
	gateway string
	ledger  *ledger
	first   func(ctx context.Context, gateway string) error
}

const ledgerName = "ledger"

func (c *ledgerController) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: ledgerName, Version: "1", APIVersion: sdk.APIVersion}, nil
}

func (c *ledgerController) HandleEvent(ctx context.Context, _ sdk.Host, ev sdk.Event) error {
	if c.first != nil {
		if err := c.first(ctx, c.gateway); err != nil {
			return err
		}
	}
	c.ledger.record(c.gateway, ev)
	return nil
}

func (c *ledgerController) Shutdown(context.Context) error { return nil }

// refuseAll fails every event.
func refuseAll(context.Context, string) error { return errors.New("not now") }

// ledger is who handled each event, by "flow/seq".
type ledger struct {
	mu  sync.Mutex
	got map[string][]string
}

func (l *ledger) record(gateway string, ev sdk.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.got == nil {
		l.got = map[string][]string{}
	}
	k := fmt.Sprintf("%s/%d", ev.FlowID, ev.Seq)
	l.got[k] = append(l.got[k], gateway)
}

// by returns who handled event seq of flow, in order.
func (l *ledger) by(flow string, seq int64) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got[fmt.Sprintf("%s/%d", flow, seq)]...)
}

// snapshot copies the ledger.
func (l *ledger) snapshot() map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]string{}
	for k, v := range l.got {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// streamsGateway starts a gateway named name on the etcd installation
// url with a member lease of ttl and the ledger controller in process,
// which retries a failed event at once.
func streamsGateway(t *testing.T, url, name string, ttl time.Duration, l *ledger, first func(context.Context, string) error) *gateway.Gateway {
	t.Helper()
	return streamsGatewayWith(t, url, name, ttl, l, first,
		pluginhost.DeliveryConfig{Backoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, MaxFailures: 1 << 20, Concurrency: 4})
}

// streamsGatewayWith is streamsGateway with delivery tuned by dc.
func streamsGatewayWith(t *testing.T, url, name string, ttl time.Duration, l *ledger, first func(context.Context, string) error, dc pluginhost.DeliveryConfig) *gateway.Gateway {
	t.Helper()
	home, err := os.MkdirTemp("", "fgstream")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(home) })
	var fc gateway.FileConfig
	fc.Store.URL = url
	fc.Cluster.LeaseTTL = gateway.Duration(ttl)
	g, err := gateway.New(gateway.Config{Home: home, File: fc, Launch: testLaunch, Poll: 20 * time.Millisecond, Logger: hclog.New(&hclog.LoggerOptions{Name: name, Level: hclog.Warn}),
		Self: home + "/no-such-flowgate",
		Controllers: map[string]func(func(string) string) sdk.Controller{ledgerName: func(func(string) string) sdk.Controller {
			return &ledgerController{gateway: name, ledger: l, first: first}
		}},
		Delivery: dc,
	})
	require.NoError(t, err)
	require.NoError(t, g.Start(context.Background()))
	t.Cleanup(func() { g.Stop(context.Background()) })
	return g
}

// streamsEngine is an engine straight on the installation's prefix, as a
// command with --store would have.
func streamsEngine(t *testing.T, srv *etcdtest.Server, prefix string) (*engine.Engine, *etcd.Store) {
	t.Helper()
	direct, err := etcd.New(srv.Client(), etcd.Options{Prefix: prefix})
	require.NoError(t, err)
	eng, err := engine.New(direct, engine.Config{})
	require.NoError(t, err)
	return eng, direct
}

// TestEventStreamsOneGatewayAtATime runs three gateways on one etcd
// installation: every event of 24 managed flows (their start and three
// wakes each, all due at once) is handled once, and each flow's events
// by one gateway.
func TestEventStreamsOneGatewayAtATime(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	url := "etcd://" + srv.Endpoint() + prefix
	l := &ledger{}
	for _, name := range []string{"a", "b", "c"} {
		streamsGateway(t, url, name, 10*time.Second, l, nil)
	}
	eng, _ := streamsEngine(t, srv, prefix)
	var flows []string
	for i := range 24 {
		f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "streams", ControllerID: ledgerName, Goal: fmt.Sprint(i)})
		require.NoError(t, err)
		flows = append(flows, f.ID)
	}
	past := time.Now().Add(-time.Second)
	for _, id := range flows {
		for k := range 3 {
			_, err := eng.SetWake(id, fmt.Sprint("w", k), past)
			require.NoError(t, err)
		}
	}
	polltest.Until(t, "every event to be handled", func() bool {
		got := l.snapshot()
		for _, id := range flows {
			for seq := int64(1); seq <= 4; seq++ {
				if len(got[fmt.Sprintf("%s/%d", id, seq)]) == 0 {
					return false
				}
			}
		}
		return true
	}, polltest.Explain(func() string { return fmt.Sprint(l.snapshot()) }))
	got := l.snapshot()
	require.Len(t, got, 4*len(flows), "an event no flow queued was handled")
	for k, by := range got {
		require.Len(t, by, 1, "event %s was handled by %v", k, by)
	}
	for _, id := range flows {
		for seq := int64(2); seq <= 4; seq++ {
			require.Equal(t, l.by(id, 1), l.by(id, seq), "flow %s moved between live gateways", id)
		}
	}
}

// TestStoppedGatewayHandsItsStreamsOver: a gateway that holds a flow's
// stream (its controller keeps failing the event) and stops gracefully
// releases it, and the other gateway delivers the event at once, not a
// lease later (the lease is 60 s; the wait gives up after 30).
func TestStoppedGatewayHandsItsStreamsOver(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	url := "etcd://" + srv.Endpoint() + prefix
	l := &ledger{}
	a := streamsGateway(t, url, "a", time.Minute, l, refuseAll)
	eng, _ := streamsEngine(t, srv, prefix)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "handover", ControllerID: ledgerName, Goal: "handover"})
	require.NoError(t, err)
	holderIs := func(want string) func() bool {
		return func() bool {
			h, err := eng.StreamHolders()
			return err == nil && h[f.ID] != "" && (want == "" || h[f.ID] == want)
		}
	}
	polltest.Until(t, "gateway a to claim the flow's stream", holderIs(""))
	holders, err := eng.StreamHolders()
	require.NoError(t, err)
	aID := holders[f.ID]
	polltest.Until(t, "gateway a to fail the event", func() bool {
		evs, err := eng.Events(f.ID)
		return err == nil && len(evs) == 1 && evs[0].Deliveries >= 2
	})

	streamsGateway(t, url, "b", time.Minute, l, nil)
	polltest.Until(t, "gateway a to fail the event again while b runs", func() bool {
		evs, err := eng.Events(f.ID)
		return err == nil && len(evs) == 1 && evs[0].Deliveries >= 6
	})
	require.Empty(t, l.by(f.ID, 1), "gateway b took a stream a live gateway holds")
	require.True(t, holderIs(aID)())

	require.NoError(t, a.Stop(context.Background()))
	polltest.Until(t, "gateway b to deliver the event", func() bool { return len(l.by(f.ID, 1)) == 1 })
	require.Equal(t, []string{"b"}, l.by(f.ID, 1))
}

// TestDeadGatewaysStreamsMove: when a gateway's member lease ends (here
// revoked, as etcd does when the gateway dies), the other gateway takes
// the streams it held, and the gateway whose lease ended delivers no
// more.
func TestDeadGatewaysStreamsMove(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	url := "etcd://" + srv.Endpoint() + prefix
	l := &ledger{}
	streamsGateway(t, url, "a", time.Minute, l, refuseAll)
	eng, direct := streamsEngine(t, srv, prefix)
	f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "dead", ControllerID: ledgerName, Goal: "dead"})
	require.NoError(t, err)
	var aID string
	polltest.Until(t, "gateway a to claim the flow's stream", func() bool {
		h, err := eng.StreamHolders()
		aID = h[f.ID]
		return err == nil && aID != ""
	})
	streamsGateway(t, url, "b", time.Minute, l, nil)

	members, err := direct.Members(context.Background())
	require.NoError(t, err)
	require.Len(t, members, 2)
	srv.EndLease(t, direct, aID)
	polltest.Until(t, "gateway b to deliver the event", func() bool { return len(l.by(f.ID, 1)) == 1 })
	require.Equal(t, []string{"b"}, l.by(f.ID, 1))
	h, err := eng.StreamHolders()
	require.NoError(t, err)
	require.NotEqual(t, aID, h[f.ID], "the stream still names the gone member")
	require.NotEmpty(t, h[f.ID], "the flow goes on, so its stream stays with the gateway that took it")
}

// TestNewStreamsSpreadOverGateways: a gateway claims no more new streams
// than it has deliveries free, so six flows that start at once, on three
// gateways that deliver to two flows at a time, go two to each.
func TestNewStreamsSpreadOverGateways(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	url := "etcd://" + srv.Endpoint() + prefix
	l := &ledger{}
	release := make(chan struct{})
	var mu sync.Mutex
	inFlight := map[string]int{}
	hold := func(ctx context.Context, gateway string) error {
		mu.Lock()
		inFlight[gateway]++
		mu.Unlock()
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, name := range []string{"a", "b", "c"} {
		streamsGatewayWith(t, url, name, 10*time.Second, l, hold, pluginhost.DeliveryConfig{Concurrency: 2})
	}
	eng, _ := streamsEngine(t, srv, prefix)
	for i := range 6 {
		_, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "spread", ControllerID: ledgerName, Goal: fmt.Sprint(i)})
		require.NoError(t, err)
	}
	counts := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(inFlight)
	}
	polltest.Until(t, "six deliveries in flight", func() bool {
		n := 0
		for _, c := range counts() {
			n += c
		}
		return n == 6
	}, polltest.Explain(func() string { return fmt.Sprint(counts()) }))
	require.Equal(t, map[string]int{"a": 2, "b": 2, "c": 2}, counts())
	close(release)
	polltest.Until(t, "every start to be handled", func() bool { return len(l.snapshot()) == 6 })
}
