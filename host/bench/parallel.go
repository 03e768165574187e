package bench

import (
	"cmp"
	"context"
	"sync"
	"sync/atomic"
)

// parallel calls do n times in all from workers goroutines. A goroutine
// stops at its first error, and every goroutine once ctx ends. It returns
// the first error, else ctx's.
func parallel(ctx context.Context, n, workers int, do func() error) error {
	var (
		next  atomic.Int64
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				if err := do(); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return cmp.Or(first, ctx.Err())
}
