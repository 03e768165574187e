package runner_test

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/sdk"
)

// The runner launches as many queued tasks at once as the admission cap
// allows: after the first launch, which goes alone to probe the store,
// each launch here waits until the others are under way too, so a runner
// that launched one task at a time would see one at a time.
func TestDispatchLaunchesUpToTheCapAtOnce(t *testing.T) {
	t.Parallel()
	const together = 4
	var (
		mu                       sync.Mutex
		launches, inFlight, most int
		all                      = make(chan struct{})
	)
	h := newHome(t, func(c *runner.Config) {
		c.MaxRunning = together + 1
		c.Launch = func(dir string, env []string) (*os.Process, error) {
			mu.Lock()
			launches++
			probe := launches == 1
			if !probe {
				inFlight++
				most = max(most, inFlight)
				if inFlight == together {
					close(all)
				}
			}
			mu.Unlock()
			if probe {
				return launchShim(dir, env)
			}
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
	for range together + 1 {
		ids = append(ids, h.create(h.spec("true")).ID)
	}
	h.start()
	for _, id := range ids {
		require.Equal(t, sdk.TaskSucceeded, h.wait(id).Status)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, together, most, "launches under way at once after the probe")
}

// A slot that frees up while a launch is slow is filled at once: dispatch
// does not wait for the launches it began before it looks at the queue
// again. Here one launch is held until the test ends it, and other tasks
// must run meanwhile.
func TestDispatchDoesNotWaitForASlowLaunch(t *testing.T) {
	t.Parallel()
	const slow = "held-launch"
	held := make(chan struct{})
	h := startHome(t, func(c *runner.Config) {
		c.MaxRunning = 2
		c.Launch = func(dir string, env []string) (*os.Process, error) {
			if strings.Contains(strings.Join(env, "\n"), slow) {
				<-held
			}
			return launchShim(dir, env)
		}
	})
	release := sync.OnceFunc(func() { close(held) })
	t.Cleanup(release) // before the runner stops, should the test fail
	// The first launch after the start goes alone: let it pass.
	require.Equal(t, sdk.TaskSucceeded, h.wait(h.create(h.spec("true")).ID).Status)

	task := h.create(h.spec("echo " + slow))
	for range 3 {
		require.Equal(t, sdk.TaskSucceeded, h.wait(h.create(h.spec("true")).ID).Status,
			"a task waited for the held launch of another")
	}
	release()
	require.Equal(t, sdk.TaskSucceeded, h.wait(task.ID).Status)
}
