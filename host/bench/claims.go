package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// claimers is how many gateways claim tasks at once in the claims figure.
const claimers = 3

// claimLook is how many queued tasks a claimer takes from one look at
// the queue: a runner's free slots under the default cap.
const claimLook = 8

// Claims queues n tasks of true through engs[0] and then has one claimer
// per engine take them as gateways' runners do, until the queue is
// empty: each looks at the queue (claimLook tasks, oldest first) and
// starts what it saw at once, a guarded write that one claimer wins and
// the others lose. It returns the claims per second, and fails when a
// task was taken other than once. engs are engines on one store, each
// through its own client for a store shared by several gateways.
func Claims(engs []*engine.Engine, n int) (float64, error) {
	if err := queue(engs[0], n); err != nil {
		return 0, err
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		taken = map[string]string{}
		twice error
		first error
	)
	fail := func(err error) {
		mu.Lock()
		first = cmp.Or(first, err)
		mu.Unlock()
	}
	start := time.Now()
	for i, eng := range engs {
		gateway := fmt.Sprintf("bench-gateway-%d", i+1)
		wg.Go(func() {
			for {
				tasks, _, err := eng.RunnableTasks(claimLook)
				if err != nil {
					fail(fmt.Errorf("look at the queue: %w", err))
					return
				}
				if len(tasks) == 0 {
					return
				}
				var look sync.WaitGroup
				for _, t := range tasks {
					look.Go(func() {
						_, err := eng.StartTask(t.ID, engine.StartInput{Gateway: gateway})
						switch {
						case errors.Is(err, sdk.ErrIllegalTransition):
							// Another gateway took it first.
						case err != nil:
							fail(fmt.Errorf("claim task %s: %w", t.ID, err))
						default:
							mu.Lock()
							if taken[t.ID] != "" {
								twice = fmt.Errorf("task %s was claimed by %s and by %s", t.ID, taken[t.ID], gateway)
							}
							taken[t.ID] = gateway
							mu.Unlock()
						}
					})
				}
				look.Wait()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	switch {
	case first != nil:
		return 0, first
	case twice != nil:
		return 0, twice
	case len(taken) != n:
		return 0, fmt.Errorf("%d of %d queued tasks were claimed", len(taken), n)
	}
	return float64(n) / elapsed.Seconds(), nil
}

// queue creates n tasks of true through eng, 16 at a time.
func queue(eng *engine.Engine, n int) error {
	return parallel(context.Background(), n, 16, func() error {
		_, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "bench-claims", Spec: sdk.TaskSpec{Shell: "true"}})
		if err != nil {
			return fmt.Errorf("queue a task: %w", err)
		}
		return nil
	})
}
