package etcd_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/flowgate/flowgate/host/store"
)

// BenchmarkBareTxn is etcd's own figure for a guarded update on the
// embedded etcd, the one Store.Update is held to: one round trip,
// Txn().If(Version(k) = v).Then(Put k).Else(Get k), by 1 and 64 writers
// each on its own key, as ops/s and as a multiple of a raw fsync probe
// (x-fsync).
//
//	go test -run x -bench 'BareTxn|GuardedUpdate/etcd' ./host/store/etcd/
func BenchmarkBareTxn(b *testing.B) {
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			cli, prefix := server.Client(), server.Prefix()
			fsync, err := store.ProbeFsync(server.Dir(), fsyncProbe)
			require.NoError(b, err)
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				left = b.N
			)
			b.ResetTimer()
			for w := range writers {
				wg.Go(func() {
					key := fmt.Sprintf("%sbare/%d", prefix, w)
					var version int64
					for {
						mu.Lock()
						if left == 0 {
							mu.Unlock()
							return
						}
						left--
						mu.Unlock()
						resp, err := cli.Txn(context.Background()).
							If(clientv3.Compare(clientv3.Version(key), "=", version)).
							Then(clientv3.OpPut(key, "x")).
							Else(clientv3.OpGet(key)).Commit()
						if err != nil || !resp.Succeeded {
							b.Errorf("bare txn on %s: %v (succeeded %v)", key, err, err == nil && resp.Succeeded)
							return
						}
						version++
					}
				})
			}
			wg.Wait()
			ops := float64(b.N) / b.Elapsed().Seconds()
			b.ReportMetric(ops, "ops/s")
			b.ReportMetric(ops/fsync, "x-fsync")
		})
	}
}
