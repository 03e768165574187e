package scheduler_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/sdk"
)

// heard is a scheduler.Observer that keeps what it hears.
type heard struct {
	mu       sync.Mutex
	lags     []time.Duration
	outcomes map[string]int
}

func (h *heard) CronFired(lag time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lags = append(h.lags, lag)
}

func (h *heard) CronRunEnded(job, outcome string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.outcomes[job+" "+outcome]++
}

// The observer hears each fired run with how late it fired, and each
// run's end once, with its job's name: a skipped one when it is claimed, a run that started
// when it settles.
func TestObserverHearsFireLagAndOutcomes(t *testing.T) {
	h := &heard{outcomes: map[string]int{}}
	e := newLoopEnv(t, scheduler.Config{Observer: h})
	j := e.add(everyMinute("observed"))
	e.tickAt(minute(1).Add(5 * time.Second))
	e.tickAt(minute(2)) // the first still runs: skipped
	rs := e.runs(j.ID)
	require.Len(t, rs, 2)
	e.finishTask(rs[1].TaskID, sdk.TaskSucceeded)
	e.tickAt(minute(2).Add(30 * time.Second))
	e.tickAt(minute(2).Add(40 * time.Second)) // settled already: heard once
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Equal(t, []time.Duration{5 * time.Second, 0}, h.lags)
	require.Equal(t, map[string]int{"observed " + scheduler.RunSkipped: 1, "observed " + scheduler.RunOK: 1}, h.outcomes, "each outcome under its job's name")
}
