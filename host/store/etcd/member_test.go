package etcd_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// openOwn returns a store on prefix over a client of its own, so that
// closing the client is a process dying; dial adds to how it dials.
func openOwn(t *testing.T, prefix string, dial ...grpc.DialOption) (*etcd.Store, *clientv3.Client) {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{server.Endpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop(), DialOptions: dial})
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	s, err := etcd.New(cli, etcd.Options{Prefix: prefix})
	require.NoError(t, err)
	return s, cli
}

// TestMembersJoinBeatDrainAndLeave: two members register with their
// info, labels, lease and load; a duplicate id is refused; a drain mark
// reaches its member and no other; the heartbeat moves; a member that
// leaves is gone at once, and one that dies once its lease ends.
func TestMembersJoinBeatDrainAndLeave(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	prefix := server.Prefix()
	a, _ := openOwn(t, prefix)
	b, bCli := openOwn(t, prefix)
	var running atomic.Int64
	running.Store(2)
	load := func() etcd.MemberLoad { return etcd.MemberLoad{Running: int(running.Load()), MaxRunning: 8} }
	ma, err := a.Join(ctx, etcd.MemberInfo{ID: "node-a.1", Host: "node-a", PID: 1, Address: "/run/a.sock", Labels: []string{"gpu"}}, 3, load)
	require.NoError(t, err)
	t.Cleanup(func() { ma.Leave(context.Background()) })
	mb, err := b.Join(ctx, etcd.MemberInfo{ID: "node-b.2", Host: "node-b", PID: 2}, 2, nil)
	require.NoError(t, err)
	_, err = b.Join(ctx, etcd.MemberInfo{ID: "node-a.1"}, 2, nil)
	require.ErrorContains(t, err, "a member named node-a.1 is already registered")

	members, err := a.Members(ctx)
	require.NoError(t, err)
	require.Len(t, members, 2)
	require.Equal(t, "node-a.1", members[0].ID)
	require.Equal(t, []string{"gpu"}, members[0].Labels)
	require.Equal(t, "/run/a.sock", members[0].Address)
	require.Equal(t, 3, members[0].TTL)
	require.Equal(t, 2, members[0].Load.Running)
	require.Positive(t, members[0].LeaseLeft)
	require.NotZero(t, members[0].Lease)
	first := members[0].Heartbeat

	require.ErrorIs(t, a.Drain(ctx, "node-z.9"), etcd.ErrNoMember)
	require.NoError(t, b.Drain(ctx, "node-a.1"))
	polltest.Until(t, "the drain mark to reach node-a.1", ma.Draining)
	require.False(t, mb.Draining(), "only the member named drains")
	running.Store(5)
	polltest.Until(t, "a heartbeat", func() bool {
		ms, err := a.Members(ctx)
		return err == nil && ms[0].Heartbeat.After(first) && ms[0].Load.Running == 5 && ms[0].Draining
	})

	require.NoError(t, bCli.Close()) // node-b dies: its keepalives stop
	polltest.Until(t, "node-b's lease to end", func() bool {
		ms, err := a.Members(ctx)
		return err == nil && len(ms) == 1
	})
	require.NoError(t, ma.Leave(context.Background()))
	require.NoError(t, ma.Leave(context.Background()), "Leave is idempotent")
	<-ma.Done()
	members, err = a.Members(ctx)
	require.NoError(t, err)
	require.Empty(t, members, "a member that leaves is gone at once")
}

// A member whose lease already ended (paused or cut off past its TTL)
// has nothing left to leave: Leave succeeds, so a gateway stopped after
// it lost its lease exits cleanly instead of failing its stop.
func TestLeaveAfterTheLeaseEnded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := openOwn(t, server.Prefix())
	m, err := s.Join(ctx, etcd.MemberInfo{ID: "gone.1"}, 60, nil)
	require.NoError(t, err)
	server.EndLease(t, s, m.ID())
	<-m.Done()
	require.NoError(t, m.Leave(context.Background()))
}
