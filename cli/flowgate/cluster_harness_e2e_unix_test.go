//go:build unix

package main_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/polltest"
)

// clusterLeaseTTL is the cluster.lease_ttl of the gateways in these
// tests: short, so that a paused or killed leader's lease ends soon, and
// long enough for a loaded machine to renew a live one.
const clusterLeaseTTL = 3 * time.Second

// etcdInstall is a fleet whose gateways hold leases of clusterLeaseTTL,
// with the history of its cron election watched from before any gateway
// starts.
type etcdInstall struct {
	*fleet
	fences *fenceLog
}

// newEtcdInstall builds the binary, starts an embedded etcd and watches
// the cron election from before any gateway starts.
func newEtcdInstall(t *testing.T) *etcdInstall {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end run with real gateway processes on an embedded etcd")
	}
	f := newFleet(t, clusterLeaseTTL)
	return &etcdInstall{fleet: f, fences: watchFences(t, f.srv.Client(), strings.TrimSuffix(f.prefix, "/")+".leader/"+gateway.CronRole+"/")}
}

// fenceLog is the history of the cron election's leader keys, from the
// test's own watch: the revision at which each member's key was deleted
// (it resigned, left, or its lease ended). A write fenced on a
// member's leadership commits only before then.
type fenceLog struct {
	mu    sync.Mutex
	ended map[string]int64
}

// watchFences starts watching the leader keys under prefix from the
// current revision on, until the test ends.
func watchFences(t *testing.T, cli *clientv3.Client, prefix string) *fenceLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	now, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	l := &fenceLog{ended: map[string]int64{}}
	w := cli.Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithRev(now.Header.Revision+1))
	go func() {
		for resp := range w {
			l.mu.Lock()
			for _, ev := range resp.Events {
				if ev.Type == clientv3.EventTypeDelete && ev.PrevKv != nil {
					l.ended[string(ev.PrevKv.Value)] = ev.Kv.ModRevision
				}
			}
			l.mu.Unlock()
		}
	}()
	return l
}

// end returns the revision at which member's leadership ended, or 0.
func (l *fenceLog) end(member string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended[member]
}

// waitLeader waits, bounded, until a member leads cron that is none of
// not, and returns its id.
func (in *etcdInstall) waitLeader(not ...string) string {
	in.t.Helper()
	var leader string
	polltest.Until(in.t, "a new cron leader", func() bool {
		var err error
		leader, err = in.es.Leader(context.Background(), gateway.CronRole)
		require.NoError(in.t, err)
		return leader != "" && !slices.Contains(not, leader)
	}, polltest.Within(30*time.Second), polltest.Every(50*time.Millisecond))
	return leader
}
