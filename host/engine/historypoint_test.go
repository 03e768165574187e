package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/etcd"
)

// etcdRequests counts the Range and Txn requests a client sends to etcd.
type etcdRequests struct {
	mu           sync.Mutex
	ranges, txns int
}

// count is a gRPC client interceptor that counts the request.
func (r *etcdRequests) count(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	r.mu.Lock()
	switch req.(type) {
	case *etcdserverpb.RangeRequest:
		r.ranges++
	case *etcdserverpb.TxnRequest:
		r.txns++
	}
	r.mu.Unlock()
	return invoker(ctx, method, req, reply, cc, opts...)
}

// take returns the counts so far and starts again from zero.
func (r *etcdRequests) take() (ranges, txns int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ranges, txns = r.ranges, r.txns
	r.ranges, r.txns = 0, 0
	return ranges, txns
}

// TestFlowUpdateOnEtcdIsOneTxn: a guarded flow update on etcd, its flow
// known to the store, is one Txn: the history's numbers come from its
// meta, a point read the store's cache answers, and the entry to drop
// once the history is full from the meta's queues, refilled by a scan
// once every 16 drops or so. Each update used to scan the history for its
// newest entry, and, once full, twice more for the entry to drop: three
// Ranges per update.
func TestFlowUpdateOnEtcdIsOneTxn(t *testing.T) {
	if etcdServer == nil {
		t.Skip("counts etcd requests; runs in the etcd pass")
	}
	t.Parallel()
	var reqs etcdRequests
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdServer.Endpoint()}, DialTimeout: 5 * time.Second, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(reqs.count)}})
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	st, err := etcd.New(cli, etcd.Options{Prefix: etcdServer.Prefix()})
	require.NoError(t, err)
	const limit, updates = 50, 400
	eng, err := engine.New(st, engine.Config{HistoryLimit: limit})
	require.NoError(t, err)
	f := createFlow(t, eng)
	reqs.take()
	for i := range updates {
		f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{State: []byte(fmt.Sprintf(`{"i":%d}`, i))})
		require.NoError(t, err)
	}
	ranges, txns := reqs.take()
	t.Logf("%d updates: %d Txns, %d Ranges", updates, txns, ranges)
	require.Equal(t, updates, txns, "one Txn per update")
	require.LessOrEqual(t, ranges, updates/10, "a scan to refill a drop queue now and then, no read per update")
	page, err := eng.History(f.ID, 0, 0)
	require.NoError(t, err)
	require.Len(t, page.Entries, limit)
	require.Equal(t, int64(updates+1), page.Entries[limit-1].Seq)
	require.Equal(t, int64(updates+1-limit), page.Dropped)
}

// An entry appended by a version that does not keep the meta's last seq
// (a gateway not yet upgraded, on the same etcd) is neither overwritten
// nor numbered again: the next append finds it and numbers after it.
func TestHistoryAppendAfterAnOlderVersionAppended(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	f := createFlow(t, eng)
	f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{State: []byte(`{"n":1}`)})
	require.NoError(t, err)
	older := fmt.Sprintf("history/%s/e/%020d", f.ID, 3)
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put(older, []byte(`{"seq":3,"at":"2026-01-01T00:00:00Z","kind":"revision","summary":"by an older version"}`))
		return err
	}))
	f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{State: []byte(`{"n":2}`)})
	require.NoError(t, err)
	_, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{State: []byte(`{"n":3}`)})
	require.NoError(t, err)
	page, err := eng.History(f.ID, 0, 0)
	require.NoError(t, err)
	var got []string
	for _, e := range page.Entries {
		got = append(got, fmt.Sprint(e.Seq, " ", e.Kind))
	}
	require.Equal(t, []string{"1 flow.created", "2 revision", "3 revision", "4 revision", "5 revision"}, got)
	require.Equal(t, "by an older version", page.Entries[2].Summary, "the older version's entry stays")
}

// A meta rewritten by an older version (which keeps only the dropped
// count and where each tier's search starts, and drops the fields it
// does not know) is taken up again: the next append scans once for the
// newest entry and the tiers' oldest, and the bound carries on.
func TestHistoryMetaRewrittenByAnOlderVersion(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	const limit = 20
	eng, err := engine.New(st, engine.Config{HistoryLimit: limit})
	require.NoError(t, err)
	f := createFlow(t, eng)
	update := func(n int) {
		for i := range n {
			f, err = eng.UpdateFlow(f.ID, f.Revision, engine.FlowPatch{State: []byte(fmt.Sprintf(`{"i":%d}`, i))})
			require.NoError(t, err)
		}
	}
	update(40)
	meta := "history/" + f.ID + "/meta"
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		it, err := tx.Get(meta)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(it.Value, &m); err != nil {
			return err
		}
		for k := range m {
			if k != "dropped" && k != "progress_from" && k != "ordinary_from" {
				delete(m, k)
			}
		}
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		_, err = tx.Put(meta, b)
		return err
	}))
	update(40)
	page, err := eng.History(f.ID, 0, 0)
	require.NoError(t, err)
	want := []int64{1} // flow.created is kept
	for seq := int64(81 - limit + 2); seq <= 81; seq++ {
		want = append(want, seq)
	}
	var got []int64
	for _, e := range page.Entries {
		got = append(got, e.Seq)
	}
	require.Equal(t, want, got)
	require.Equal(t, int64(81-limit), page.Dropped)
}
