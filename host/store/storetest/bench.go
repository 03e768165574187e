package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/flowgate/flowgate/host/store"
)

// The workload of every guarded-update benchmark (docs/performance.md):
// BenchKeys records of about 300 bytes; each operation reads a record,
// checks the revision its writer expects and writes the next. Every
// 100th operation of a writer is stale on purpose and must be refused, so
// a benchmark cannot win by skipping the guard.
const (
	BenchKeys   = 1000
	staleEvery  = 100
	benchRecord = `{"id":"%04d","status":"running","owner":"gateway-1","state":{"step":3,"note":"%s"}}`
)

// BenchKey is the key of record i of the workload.
func BenchKey(i int) string { return fmt.Sprintf("bench/%04d", i) }

// BenchValue is the value of record i of the workload, about 300 bytes.
func BenchValue(i int) []byte {
	v := fmt.Sprintf(benchRecord, i, "")
	return fmt.Appendf(nil, benchRecord, i, strings.Repeat("x", 300-len(v)))
}

// GuardedPut writes value at record key (an index of the workload) if the
// record's revision is expected, and reports whether it did.
type GuardedPut func(key int, expected int64, value []byte) (bool, error)

// RunGuarded runs b.N guarded puts from writers goroutines, each on
// records of its own (key % writers) in a seeded order, with the timer on
// only around them. Every record must be at revision 1 when it starts. It
// fails b on an outcome other than the expected one (a stale put that
// succeeds, a fresh one that is refused) and returns the revision each
// record should have at the end.
func RunGuarded(b *testing.B, writers int, put GuardedPut) []int64 {
	revs := make([]int64, BenchKeys)
	for i := range revs {
		revs[i] = 1
	}
	values := make([][]byte, BenchKeys)
	for i := range values {
		values[i] = BenchValue(i)
	}
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			own := (BenchKeys - w + writers - 1) / writers // keys k with k % writers == w
			for n := 0; w+n*writers < b.N; n++ {
				k := w + rng.IntN(own)*writers
				expected, want := revs[k], true
				if n%staleEvery == staleEvery-1 {
					expected, want = revs[k]-1, false
				}
				ok, err := put(k, expected, values[k])
				if err != nil || ok != want {
					b.Errorf("writer %d, %s at revision %d: ok=%v (want %v), err=%v", w, BenchKey(k), expected, ok, want, err)
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

// BenchGuardedUpdates writes the workload's records into s (100 to a
// transaction, within etcd's limits), runs RunGuarded on it through
// s.Update (Get, compare the revision, Put), and fails b on any record
// whose revision is then not the number of updates it took.
func BenchGuardedUpdates(b *testing.B, s store.Store, writers int) {
	b.Helper()
	for from := 0; from < BenchKeys; from += 100 {
		if err := s.Update(b.Context(), func(tx store.Tx) error {
			for k := from; k < from+100; k++ {
				if _, err := tx.Put(BenchKey(k), BenchValue(k)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	revs := RunGuarded(b, writers, func(k int, expected int64, value []byte) (bool, error) {
		return guardedPut(b.Context(), s, BenchKey(k), expected, value)
	})
	if err := s.View(b.Context(), func(tx store.ReadTx) error {
		for k, want := range revs {
			it, err := tx.Get(BenchKey(k))
			if err != nil {
				return err
			}
			if it.Revision != want {
				return fmt.Errorf("%s: revision %d, want %d", BenchKey(k), it.Revision, want)
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
}

// guardedPut writes value at key if its revision is expected, in one
// Update, and reports whether it did.
func guardedPut(ctx context.Context, s store.Store, key string, expected int64, value []byte) (bool, error) {
	var ok bool
	err := s.Update(ctx, func(tx store.Tx) error {
		ok = false
		it, err := tx.Get(key)
		if err != nil || it.Revision != expected {
			return err
		}
		_, err = tx.Put(key, value)
		ok = err == nil
		return err
	})
	return ok, err
}
