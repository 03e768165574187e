package store_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowgate/flowgate/host/store"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"
)

// The workload of docs' backends-and-performance part 2: 1,000 records of
// about 300 bytes; each operation reads a record, checks the revision the
// writer expects and writes the next one. Every 100th operation of a writer
// is deliberately stale and must be refused, so the benchmark cannot win by
// skipping the guard.
const (
	benchKeys   = 1000
	staleEvery  = 100
	fsyncProbe  = 300 * time.Millisecond
	benchRecord = `{"id":"%04d","status":"running","owner":"gateway-1","state":{"step":3,"note":"%s"}}`
)

// guardedPut writes value at key if the key's revision is expected, and
// reports whether it did.
type guardedPut func(key int, expected int64, value []byte) (bool, error)

func benchKey(i int) string { return fmt.Sprintf("flow/%04d", i) }

func benchValue(i int) []byte {
	v := fmt.Sprintf(benchRecord, i, "")
	return fmt.Appendf(nil, benchRecord, i, strings.Repeat("x", 300-len(v)))
}

// runGuarded runs b.N guarded puts from writers goroutines, each on its own
// keys (key % writers), with a seeded key choice. It checks every outcome
// and returns the revision each key should have at the end.
func runGuarded(b *testing.B, writers int, put guardedPut) []int64 {
	revs := make([]int64, benchKeys) // every key starts at revision 1
	for i := range revs {
		revs[i] = 1
	}
	values := make([][]byte, benchKeys)
	for i := range values {
		values[i] = benchValue(i)
	}
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			own := (benchKeys - w + writers - 1) / writers // keys k with k % writers == w
			for n := 0; w+n*writers < b.N; n++ {
				k := w + rng.IntN(own)*writers
				expected, wantOK := revs[k], true
				if n%staleEvery == staleEvery-1 {
					expected, wantOK = revs[k]-1, false
				}
				ok, err := put(k, expected, values[k])
				if err != nil || ok != wantOK {
					b.Errorf("writer %d, %s at revision %d: ok=%v (want %v), err=%v", w, benchKey(k), expected, ok, wantOK, err)
					return
				}
				if ok {
					revs[k]++
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	return revs
}

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
			require.NoError(b, s.Update(func(tx store.Tx) error {
				for k := range benchKeys {
					if _, err := tx.Put(benchKey(k), benchValue(k)); err != nil {
						return err
					}
				}
				return nil
			}))
			fsync, err := store.ProbeFsync(dir, fsyncProbe)
			require.NoError(b, err)
			commits0, calls0 := store.CommitStats(s)

			revs := runGuarded(b, writers, func(k int, expected int64, value []byte) (bool, error) {
				var ok bool
				err := s.Update(func(tx store.Tx) error {
					ok = false
					item, err := tx.Get(benchKey(k))
					if err != nil || item.Revision != expected {
						return err
					}
					_, err = tx.Put(benchKey(k), value)
					ok = err == nil
					return err
				})
				return ok, err
			})

			reportRate(b, fsync)
			commits, calls := store.CommitStats(s)
			if commits > commits0 {
				b.ReportMetric(float64(calls-calls0)/float64(commits-commits0), "ops/commit")
			}
			require.NoError(b, s.View(func(tx store.ReadTx) error {
				for k, want := range revs {
					item, err := tx.Get(benchKey(k))
					if err != nil {
						return err
					}
					if item.Revision != want {
						return fmt.Errorf("%s: revision %d, want %d", benchKey(k), item.Revision, want)
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
				for k := range benchKeys {
					if err := bk.Put([]byte(benchKey(k)), record(1, benchValue(k))); err != nil {
						return err
					}
				}
				return nil
			}))
			fsync, err := store.ProbeFsync(dir, fsyncProbe)
			require.NoError(b, err)

			runGuarded(b, writers, func(k int, expected int64, value []byte) (bool, error) {
				var ok bool
				err := db.Batch(func(tx *bbolt.Tx) error {
					ok = false
					bk := tx.Bucket(bucket)
					key := []byte(benchKey(k))
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
