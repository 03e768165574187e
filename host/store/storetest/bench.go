package storetest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/flowgate/flowgate/host/store"
)

// The workload of every backend's guarded-update benchmark (docs/
// performance.md): 1,000 records of about 300 bytes; each operation reads
// a record, checks the revision its writer expects and writes the next.
// Every 100th operation of a writer is stale on purpose and must be
// refused, so a benchmark cannot win by skipping the guard.
const (
	benchKeys   = 1000
	staleEvery  = 100
	benchRecord = `{"id":"%04d","status":"running","owner":"gateway-1","state":{"step":3,"note":"%s"}}`
)

func benchKey(i int) string { return fmt.Sprintf("bench/%04d", i) }

func benchValue(i int) []byte {
	v := fmt.Sprintf(benchRecord, i, "")
	return fmt.Appendf(nil, benchRecord, i, strings.Repeat("x", 300-len(v)))
}

// BenchGuardedUpdates writes the 1,000 records into s (outside the
// timer, 100 to a transaction, within etcd's limits), then runs b.N guarded updates from writers goroutines, each on
// records of its own (key % writers) in a seeded order, through
// s.Update: Get, compare the revision, Put. It fails b on an outcome other
// than the expected one (a stale update that succeeds, a fresh one that is
// refused) and, at the end, on any record whose revision is not the number
// of updates it took.
func BenchGuardedUpdates(b *testing.B, s store.Store, writers int) {
	b.Helper()
	for from := 0; from < benchKeys; from += 100 {
		if err := s.Update(func(tx store.Tx) error {
			for k := from; k < from+100; k++ {
				if _, err := tx.Put(benchKey(k), benchValue(k)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	revs := make([]int64, benchKeys)
	for i := range revs {
		revs[i] = 1
	}
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			own := (benchKeys - w + writers - 1) / writers // keys k with k % writers == w
			for n := 0; w+n*writers < b.N; n++ {
				k := w + rng.IntN(own)*writers
				expected, want := revs[k], true
				if n%staleEvery == staleEvery-1 {
					expected, want = revs[k]-1, false
				}
				ok, err := guardedPut(s, benchKey(k), expected, benchValue(k))
				if err != nil || ok != want {
					b.Errorf("writer %d, %s at revision %d: ok=%v (want %v), err=%v", w, benchKey(k), expected, ok, want, err)
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
	if err := s.View(func(tx store.ReadTx) error {
		for k, want := range revs {
			it, err := tx.Get(benchKey(k))
			if err != nil {
				return err
			}
			if it.Revision != want {
				return fmt.Errorf("%s: revision %d, want %d", benchKey(k), it.Revision, want)
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
}

// guardedPut writes value at key if its revision is expected, in one
// Update, and reports whether it did.
func guardedPut(s store.Store, key string, expected int64, value []byte) (bool, error) {
	var ok bool
	err := s.Update(func(tx store.Tx) error {
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
