package runner_test

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/sdk"
)

// The runner launches as many queued tasks at once as the admission cap
// allows: each launch here waits until the others are under way too, so
// a runner that launched one task at a time would see one at a time.
func TestDispatchLaunchesUpToTheCapAtOnce(t *testing.T) {
	t.Parallel()
	const cap = 4
	var (
		mu             sync.Mutex
		inFlight, peak int
		all            = make(chan struct{})
	)
	h := newHome(t, func(c *runner.Config) {
		c.MaxRunning = cap
		c.Launch = func(dir string, env []string) (*os.Process, error) {
			mu.Lock()
			inFlight++
			peak = max(peak, inFlight)
			if inFlight == cap {
				close(all)
			}
			mu.Unlock()
			select {
			case <-all:
			case <-time.After(3 * time.Second): // serial: give up waiting
			}
			mu.Lock()
			inFlight--
			mu.Unlock()
			return launchShim(dir, env)
		}
	})
	var ids []string
	for range cap {
		ids = append(ids, h.create(h.spec("true")).ID)
	}
	h.start()
	for _, id := range ids {
		require.Equal(t, sdk.TaskSucceeded, h.wait(id).Status)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, cap, peak, "launches under way at once")
}
