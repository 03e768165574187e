package etcd_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/storetest"
)

// fsyncProbe is how long each benchmark probes the raw fsync rate.
const fsyncProbe = 300 * time.Millisecond

// BenchmarkGuardedUpdate measures guarded updates (read, check the
// revision, write the next; storetest.BenchGuardedUpdates) with 1 and 64
// writers on the embedded etcd and, beside it, on a bbolt file in the same
// temporary directory's filesystem, each reported as a multiple of a raw
// fsync probe of that filesystem taken just before (x-fsync). The etcd
// server fsyncs its WAL on every commit, as in production.
//
//	go test -run x -bench GuardedUpdate -benchtime 2s ./host/store/etcd/
func BenchmarkGuardedUpdate(b *testing.B) {
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("etcd/writers=%d", writers), func(b *testing.B) {
			s := server.Open(b)
			bench(b, server.Dir(), s, writers)
		})
		b.Run(fmt.Sprintf("bolt/writers=%d", writers), func(b *testing.B) {
			dir := b.TempDir()
			s, err := store.Open(filepath.Join(dir, "flowgate.db"), store.Options{})
			require.NoError(b, err)
			defer s.Close()
			bench(b, dir, s, writers)
		})
	}
}

// bench probes the fsync rate under dir, runs the guarded updates on s
// and reports their rate as ops/s and x-fsync.
func bench(b *testing.B, dir string, s store.Store, writers int) {
	fsync, err := store.ProbeFsync(dir, fsyncProbe)
	require.NoError(b, err)
	storetest.BenchGuardedUpdates(b, s, writers)
	ops := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(ops, "ops/s")
	b.ReportMetric(ops/fsync, "x-fsync")
	b.ReportMetric(fsync, "fsync/s")
}
