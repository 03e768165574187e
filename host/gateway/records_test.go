package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/host/store/etcd/etcdtest"
)

// memberRecords is the records of a gateway joined to a fresh etcd as
// member here.1 of host "here", following the members, over a client
// that counts the reads (Range requests) it sends from then on.
func memberRecords(t *testing.T) (*records, *atomic.Int64) {
	t.Helper()
	srv, err := etcdtest.Start()
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	var requests atomic.Int64
	count := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if strings.HasSuffix(method, "/Range") { // not the member's heartbeat, a Txn
			requests.Add(1)
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{srv.Endpoint()}, DialTimeout: 5 * time.Second,
		Logger: zap.NewNop(), DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(count)}})
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	es, err := etcd.New(cli, etcd.Options{Prefix: srv.Prefix()})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m, err := es.Join(ctx, etcd.MemberInfo{ID: "here.1", Host: "here"}, 60, nil)
	require.NoError(t, err)
	t.Cleanup(func() { m.Leave(context.Background()) })
	roster, err := es.WatchMembers(ctx, nil)
	require.NoError(t, err)
	requests.Store(0)
	return &records{Store: es, member: m, roster: roster}, &requests
}

// Judging many running tasks of one gone gateway asks etcd about that
// gateway once, not once a task. Before, each task was one etcd read,
// which made a gateway's start and every takeover sweep slow on etcd.
func TestClusterAsksEtcdOncePerGoneGateway(t *testing.T) {
	t.Parallel()
	r, requests := memberRecords(t)
	cluster := r.cluster(t.TempDir())
	for range 100 {
		here, member := cluster("there.7")
		require.False(t, here)
		require.False(t, member)
		here, member = cluster("here.9")
		require.True(t, here, "a gone gateway of this host is reported as this machine's")
		require.False(t, member)
		here, member = cluster("here.1")
		require.True(t, here)
		require.True(t, member)
	}
	require.LessOrEqual(t, requests.Load(), int64(2), "etcd was asked once a task")
}

// A gateway reads its home's member ids once: a judgement does not read
// the file again. Before, every running task a maintenance pass judged
// read the file.
func TestMineReadsTheHomeOnce(t *testing.T) {
	t.Parallel()
	r, _ := memberRecords(t)
	dir := t.TempDir()
	require.NoError(t, rememberMember(dir, "here.0"))
	mine := r.mine(dir)
	require.NoError(t, os.Remove(filepath.Join(dir, home.MembersFile)))
	require.True(t, mine("here.0"), "an earlier gateway of this home")
	require.True(t, mine("here.1"), "this gateway")
	require.True(t, mine(""), "a task started on bbolt")
	require.False(t, mine("there.7"))
}
