package bench_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flowgate/flowgate/host/bench"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/backend"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/plugins/pipeline"
)

// TestStoreRunOnEtcd runs flowgate bench's store figures (Config.Store)
// against an embedded etcd over the tiny workload: the figures are there
// with their baselines, every claim was taken once (Claims fails
// otherwise), and the scratch prefix is gone afterwards, never its
// timings.
func TestStoreRunOnEtcd(t *testing.T) {
	t.Parallel()
	srv := sharedEtcd.Get(t)
	prefix := srv.Prefix()
	sizes := tiny
	sizes.ClaimTasks = 20
	rep, err := bench.Run(context.Background(), bench.Config{Dir: t.TempDir(), Sizes: sizes, Controller: pipeline.New(),
		Store: backend.Spec{URL: "etcd://" + srv.Endpoint() + prefix}})
	require.NoError(t, err)
	byName := map[string]bench.Figure{}
	for _, f := range rep.Figures {
		byName[f.Name] = f
	}
	for _, name := range []string{bench.FigFsync, bench.FigUpdate1, bench.FigUpdateN, bench.FigEtcdUpdate1, bench.FigEtcdUpdateN, bench.FigEtcdRecord1, bench.FigEtcdRecordN, bench.FigClaims} {
		require.Contains(t, byName, name)
		require.Positive(t, byName[name].Value, name)
	}
	require.Len(t, rep.Figures, 8, "a store run measures the store figures only")
	claims := byName[bench.FigClaims]
	require.Positive(t, claims.Baseline, "claims on bbolt")
	require.InDelta(t, claims.Value/claims.Baseline, claims.Ratio, 1e-9)
	require.Equal(t, &bench.Target{Of: "ratio", Op: ">=", Limit: 0.13}, byName[bench.FigEtcdRecord1].Target, "etcd's own figure")
	require.Equal(t, &bench.Target{Of: "ratio", Op: ">=", Limit: 0.6}, byName[bench.FigEtcdRecordN].Target, "etcd's own figure")
	require.Equal(t, &bench.Target{Of: "ratio", Op: ">=", Limit: 0.13}, byName[bench.FigEtcdUpdate1].Target, "a flow update is one Txn too")
	require.Equal(t, &bench.Target{Of: "ratio", Op: ">=", Limit: 0.6}, byName[bench.FigEtcdUpdateN].Target, "a flow update is one Txn too")

	got, err := srv.Client().Get(context.Background(), strings.TrimSuffix(prefix, "/")+".bench-", clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	require.Zero(t, got.Count, "the scratch prefix was left behind")
}

// BenchmarkTaskClaims measures task claims per second by three gateways
// (three clients of one embedded etcd, as three gateway processes have),
// each looking at the queue and starting what it saw as a runner does,
// beside three claimers on one bbolt file. Every task must be taken once.
//
//	go test -run x -bench TaskClaims ./host/bench/
func BenchmarkTaskClaims(b *testing.B) {
	const tasks = 100
	b.Run("etcd/gateways=3", func(b *testing.B) {
		srv := sharedEtcd.Get(b)
		prefix := srv.Prefix()
		engs := make([]*engine.Engine, 3)
		for i := range engs {
			st, err := etcd.New(srv.Client(), etcd.Options{Prefix: prefix})
			require.NoError(b, err)
			defer st.Close()
			engs[i], err = engine.New(st, engine.Config{})
			require.NoError(b, err)
		}
		claimBench(b, engs, tasks)
	})
	b.Run("bolt/claimers=3", func(b *testing.B) {
		st, err := store.Open(filepath.Join(b.TempDir(), "flowgate.db"), store.Options{})
		require.NoError(b, err)
		defer st.Close()
		eng, err := engine.New(st, engine.Config{})
		require.NoError(b, err)
		claimBench(b, []*engine.Engine{eng, eng, eng}, tasks)
	})
}

// claimBench runs b.N rounds of Claims over n tasks and reports the
// claims per second of the median round.
func claimBench(b *testing.B, engs []*engine.Engine, n int) {
	var rounds []float64
	for b.Loop() {
		rate, err := bench.Claims(engs, n)
		require.NoError(b, err)
		rounds = append(rounds, rate)
	}
	slices.Sort(rounds)
	b.ReportMetric(rounds[len(rounds)/2], "claims/s")
}

// BenchmarkEtcdStore is flowgate bench --store against an embedded
// single-node etcd whose data directory is on the same file system as the
// scratch directory (the system's temporary directory): the raw fsync
// rate, guarded updates with 1 and 64 writers on bbolt and on etcd, and
// task claims by three gateways on etcd and on bbolt, in one run. It
// reports each figure's value and ratio to its baseline; -v logs every
// round.
//
//	go test -run x -bench EtcdStore -benchtime 1x ./host/bench/
func BenchmarkEtcdStore(b *testing.B) {
	srv := sharedEtcd.Get(b)
	for b.Loop() {
		rep, err := bench.Run(context.Background(), bench.Config{Dir: b.TempDir(), Controller: pipeline.New(),
			Store: backend.Spec{URL: "etcd://" + srv.Endpoint() + srv.Prefix()}})
		require.NoError(b, err)
		for _, f := range rep.Figures {
			b.ReportMetric(f.Value, f.Name+"_"+strings.ReplaceAll(f.Unit, "/", "_per_"))
			if f.Baseline > 0 {
				b.ReportMetric(f.Ratio, f.Name+"_x")
			}
			b.Logf("%s: %s %s, rounds %v, baseline %s %s, ratio %s", f.Title, bench.Format(f.Value), f.Unit, f.Rounds,
				bench.Format(f.Baseline), f.BaselineUnit, bench.Format(f.Ratio))
		}
	}
}
