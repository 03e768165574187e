package etcd_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// A roster sees members join, leave, and lose their lease, says so at
// each change, and reports each leave as a departure.
func TestRosterFollowsMembers(t *testing.T) {
	t.Parallel()
	s, _ := openOwn(t, server.Prefix())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	a, err := s.Join(ctx, etcd.MemberInfo{ID: "a.1"}, 60, nil)
	require.NoError(t, err)
	t.Cleanup(func() { a.Leave(context.Background()) })
	var changes atomic.Int32
	r, err := s.WatchMembers(ctx, func() { changes.Add(1) })
	require.NoError(t, err)
	require.True(t, r.Live("a.1"))
	require.False(t, r.Live("b.2"))
	dctx, stopDepartures := context.WithCancel(ctx)
	departures := r.Departures(dctx)

	b, err := s.Join(ctx, etcd.MemberInfo{ID: "b.2"}, 60, nil)
	require.NoError(t, err)
	polltest.Until(t, "b to join the roster", func() bool { return r.Live("b.2") && changes.Load() == 1 })
	require.NoError(t, b.Leave(context.Background()))
	polltest.Until(t, "b to leave the roster", func() bool { return !r.Live("b.2") && changes.Load() == 2 })
	require.Equal(t, "b.2", <-departures)
	server.EndLease(t, s, a.ID())
	polltest.Until(t, "a to leave the roster with its lease", func() bool { return !r.Live("a.1") && changes.Load() == 3 })
	require.Equal(t, "a.1", <-departures)
	stopDepartures()
	for range departures { // closed when its context ends
	}
}

// A member the watch has not seen yet is looked up, so that it is not
// taken for gone; an id that is no member is gone. Departures asked of a
// roster whose watch ended is closed.
func TestRosterLooksUpMembersItHasNotSeen(t *testing.T) {
	t.Parallel()
	s, _ := openOwn(t, server.Prefix())
	ctx, cancel := context.WithCancel(context.Background())
	r, err := s.WatchMembers(ctx, nil)
	require.NoError(t, err)
	cancel() // the watch sees no more
	b, err := s.Join(context.Background(), etcd.MemberInfo{ID: "b.2"}, 60, nil)
	require.NoError(t, err)
	t.Cleanup(func() { b.Leave(context.Background()) })
	require.True(t, r.Live("b.2"), "a member the watch missed was taken for gone")
	require.False(t, r.Live("c.3"))
	require.False(t, r.Live("c.3"), "asked again")
	select {
	case _, open := <-r.Departures(context.Background()):
		require.False(t, open, "a departure after the watch ended")
	case <-time.After(20 * time.Second):
		t.Fatal("a roster whose watch ended left its departures channel open")
	}
}
