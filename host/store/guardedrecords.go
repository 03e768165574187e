package store

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"
)

// GuardedRecords measures guarded record updates at a store, as etcd's
// own figure is measured (one record read, its revision checked, the
// next written: on etcd one Txn compared on the record's version). It is
// what flowgate bench --store holds to etcd's figure. Each writer has a
// record of its own, so a refusal is an error, not contention.
type GuardedRecords struct {
	st    Store
	value []byte
	keys  []string
	revs  []int64
}

// NewGuardedRecords writes n records holding value into s, under
// bench/record/, one transaction each, under ctx.
func NewGuardedRecords(ctx context.Context, s Store, n int, value []byte) (*GuardedRecords, error) {
	g := &GuardedRecords{st: s, value: value, keys: make([]string, n), revs: make([]int64, n)}
	for i := range g.keys {
		g.keys[i] = fmt.Sprintf("bench/record/%04d", i)
		var rev int64
		err := s.Update(ctx, func(tx Tx) error {
			var err error
			rev, err = tx.Put(g.keys[i], value)
			return err
		})
		if err != nil {
			return nil, err
		}
		g.revs[i] = rev
	}
	return g, nil
}

// Rate has writers writers (at most the records made), each on its own
// record, update it for d, and returns the updates per second. A record
// not at the revision its writer left it at is an error, and so is the
// end of ctx.
func (g *GuardedRecords) Rate(ctx context.Context, writers int, d time.Duration) (float64, error) {
	if writers > len(g.keys) {
		return 0, fmt.Errorf("guarded records: %d writers for %d records", writers, len(g.keys))
	}
	return WritersRate(writers, d, func(w int) error { return g.update(ctx, w) })
}

// update updates record w once.
func (g *GuardedRecords) update(ctx context.Context, w int) error {
	var next int64
	err := g.st.Update(ctx, func(tx Tx) error {
		it, err := tx.Get(g.keys[w])
		if err != nil {
			return err
		}
		if it.Revision != g.revs[w] {
			return fmt.Errorf("record %s is at revision %d; its only writer left it at %d", g.keys[w], it.Revision, g.revs[w])
		}
		next, err = tx.Put(g.keys[w], g.value)
		return err
	})
	if err == nil {
		g.revs[w] = next
	}
	return err
}

// WritersRate has writers goroutines each call one(w), w its number,
// until d has passed or one(w) fails, and returns the successful calls
// per second; or the first failure.
func WritersRate(writers int, d time.Duration, one func(w int) error) (float64, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int
		first error
	)
	start := time.Now()
	deadline := start.Add(d)
	for w := range writers {
		wg.Go(func() {
			n := 0
			var err error
			for err == nil && time.Now().Before(deadline) {
				if err = one(w); err == nil {
					n++
				}
			}
			mu.Lock()
			defer mu.Unlock()
			total += n
			first = cmp.Or(first, err)
		})
	}
	wg.Wait()
	if first != nil {
		return 0, first
	}
	return float64(total) / time.Since(start).Seconds(), nil
}
