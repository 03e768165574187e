package store_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/store/storetest"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"
)

// fsyncProbe is how long each benchmark probes the raw fsync rate. The
// workload is storetest's (storetest.RunGuarded).
const fsyncProbe = 300 * time.Millisecond

// reportRate reports ops/s and the same as a multiple of the fsync rate.
func reportRate(b *testing.B, fsync float64) {
	opsPerSec := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(opsPerSec, "ops/s")
	b.ReportMetric(opsPerSec/fsync, "x-fsync")
	b.ReportMetric(fsync, "fsync/s")
}

// writerCounts are the two shapes measured: one writer (latency-bound) and
// 64 on disjoint records (throughput, group commit).
var writerCounts = [...]int{1, 64}

// BenchmarkGuardedPut measures Bolt.Update with its own group commit.
func BenchmarkGuardedPut(b *testing.B) {
	for _, writers := range writerCounts {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			dir := b.TempDir()
			s, err := store.Open(filepath.Join(dir, "flowgate.db"), store.Options{})
			require.NoError(b, err)
			defer s.Close()
			require.NoError(b, s.Update(b.Context(), func(tx store.Tx) error {
				for k := range storetest.BenchKeys {
					if _, err := tx.Put(storetest.BenchKey(k), storetest.BenchValue(k)); err != nil {
						return err
					}
				}
				return nil
			}))
			fsync, err := store.ProbeFsync(dir, fsyncProbe)
			require.NoError(b, err)
			before := s.Writer()

			revs := storetest.RunGuarded(b, writers, func(k int, expected int64, value []byte) (bool, error) {
				var ok bool
				err := s.Update(b.Context(), func(tx store.Tx) error {
					ok = false
					item, err := tx.Get(storetest.BenchKey(k))
					if err != nil || item.Revision != expected {
						return err
					}
					_, err = tx.Put(storetest.BenchKey(k), value)
					ok = err == nil
					return err
				})
				return ok, err
			})

			reportRate(b, fsync)
			after := s.Writer()
			if after.Commits > before.Commits {
				b.ReportMetric(float64(after.Updates-before.Updates)/float64(after.Commits-before.Commits), "ops/commit")
			}
			require.NoError(b, s.View(b.Context(), func(tx store.ReadTx) error {
				for k, want := range revs {
					item, err := tx.Get(storetest.BenchKey(k))
					if err != nil {
						return err
					}
					if item.Revision != want {
						return fmt.Errorf("%s: revision %d, want %d", storetest.BenchKey(k), item.Revision, want)
					}
				}
				return nil
			}))
		})
	}
}

// BenchmarkBoltBatch measures the same workload on bbolt's own DB.Batch
// with MaxBatchSize 64 and the default 10ms MaxBatchDelay, in a separate
// file with the same settings and record layout, for comparison.
func BenchmarkBoltBatch(b *testing.B) {
	bucket := []byte(store.BucketName)
	for _, writers := range writerCounts {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			dir := b.TempDir()
			db, err := bbolt.Open(filepath.Join(dir, "bolt-batch.db"), 0o600, &bbolt.Options{
				Timeout:         time.Second,
				FreelistType:    bbolt.FreelistMapType,
				InitialMmapSize: store.DefaultInitialMmapSize,
			})
			require.NoError(b, err)
			defer db.Close()
			db.MaxBatchSize = 64
			require.NoError(b, db.Update(func(tx *bbolt.Tx) error {
				bk, err := tx.CreateBucket(bucket)
				if err != nil {
					return err
				}
				for k := range storetest.BenchKeys {
					if err := bk.Put([]byte(storetest.BenchKey(k)), record(1, storetest.BenchValue(k))); err != nil {
						return err
					}
				}
				return nil
			}))
			fsync, err := store.ProbeFsync(dir, fsyncProbe)
			require.NoError(b, err)

			storetest.RunGuarded(b, writers, func(k int, expected int64, value []byte) (bool, error) {
				var ok bool
				err := db.Batch(func(tx *bbolt.Tx) error {
					ok = false
					bk := tx.Bucket(bucket)
					key := []byte(storetest.BenchKey(k))
					cur := bk.Get(key)
					if cur == nil || int64(binary.BigEndian.Uint64(cur)) != expected {
						return nil
					}
					ok = true
					return bk.Put(key, record(expected+1, value))
				})
				return ok, err
			})
			reportRate(b, fsync)
		})
	}
}

// record lays out a value the way Bolt stores it: revision, then data.
func record(rev int64, value []byte) []byte {
	buf := make([]byte, 8+len(value))
	binary.BigEndian.PutUint64(buf, uint64(rev))
	copy(buf[8:], value)
	return buf
}

// BenchmarkOpenVerify measures a writer's open of a large store (40,000
// records of 1 KB, some 60 MB) that its last writer sealed, against the
// same open with the seal removed, which reads every page as every open
// did before seals: one of each per iteration, interleaved, reported as
// milliseconds per open and their ratio.
func BenchmarkOpenVerify(b *testing.B) {
	path := filepath.Join(b.TempDir(), "flowgate.db")
	s, err := store.Open(path, store.Options{})
	require.NoError(b, err)
	value := make([]byte, 1000)
	for batch := range 40 {
		require.NoError(b, s.Update(b.Context(), func(tx store.Tx) error {
			for i := range 1000 {
				if _, err := tx.Put(fmt.Sprintf("flow/%02d/%04d", batch, i), value); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	require.NoError(b, s.Close())
	open := func() time.Duration {
		t0 := time.Now()
		s, err := store.Open(path, store.Options{})
		d := time.Since(t0)
		require.NoError(b, err)
		require.NoError(b, s.Close())
		return d
	}
	var walked, sealed time.Duration
	b.ResetTimer()
	for range b.N {
		if err := os.Remove(path + store.SealSuffix); !errors.Is(err, fs.ErrNotExist) {
			require.NoError(b, err) // a new store's first writer seals nothing
		}
		walked += open()
		require.True(b, store.Sealed(path), "the writer seals the file it opened at its close")
		sealed += open()
	}
	perOpen := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(perOpen(walked), "walked-ms/open")
	b.ReportMetric(perOpen(sealed), "sealed-ms/open")
	b.ReportMetric(float64(sealed)/float64(walked), "sealed/walked")
}
