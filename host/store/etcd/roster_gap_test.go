package etcd_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// cutter dials etcd for one client and can cut that client off: Cut
// closes its connections and refuses new ones until Mend.
type cutter struct {
	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func (c *cutter) dial(ctx context.Context, addr string) (net.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return nil, errors.New("cut off by the test")
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err == nil {
		c.conns = append(c.conns, conn)
	}
	return conn, err
}

func (c *cutter) Cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = true
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

func (c *cutter) Mend() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = false
}

// TestRosterReportsADepartureInACompactedGap: a roster's client is cut
// off from etcd while a member leaves and etcd compacts its history past
// the leave. Once the client is back, the roster's watch cannot resume
// where it stopped; the roster reads the members again, and reports the
// leave as a departure. Before, the watch of departures restarted at
// the current revision and never reported it (only the once-a-TTL sweep
// found the member gone).
//
// Not parallel: the compaction would break the reads of other tests on
// the shared server.
func TestRosterReportsADepartureInACompactedGap(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	prefix := server.Prefix()
	var cut cutter
	// The client redials at most a quarter second apart: under gRPC's
	// default backoff a cut that lasts a few seconds on a loaded machine
	// leaves the client waiting many seconds more after Mend, which
	// tests gRPC's backoff rather than the roster.
	redial := grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 50 * time.Millisecond, Multiplier: 1.6, MaxDelay: 250 * time.Millisecond},
		MinConnectTimeout: time.Second,
	})
	s, _ := openOwn(t, prefix, grpc.WithContextDialer(cut.dial), redial)
	direct, err := etcd.New(server.Client(), etcd.Options{Prefix: prefix})
	require.NoError(t, err)
	r, err := s.WatchMembers(ctx, nil)
	require.NoError(t, err)
	departures := r.Departures(ctx)

	b, err := direct.Join(ctx, etcd.MemberInfo{ID: "b.2"}, 60, nil)
	require.NoError(t, err)
	polltest.Until(t, "b to join the roster", func() bool { return r.Live("b.2") })

	cut.Cut()
	require.NoError(t, b.Leave(context.Background()))
	put, err := server.Client().Put(ctx, prefix+"gap", "x")
	require.NoError(t, err)
	_, err = server.Client().Compact(ctx, put.Header.Revision, clientv3.WithCompactPhysical())
	require.NoError(t, err)
	cut.Mend()

	select {
	case id := <-departures:
		require.Equal(t, "b.2", id)
	case <-time.After(20 * time.Second):
		t.Fatal("the roster never reported the member that left while its watch was cut off")
	}
	require.False(t, r.Live("b.2"))
}
