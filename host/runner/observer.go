package runner

import (
	"time"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Observer hears of task starts and ends as the runner records them; the
// gateway's metrics implement it. Its methods run on the runner's
// goroutines and must not block.
type Observer interface {
	// TaskStarted: an attempt started wait after its task became
	// runnable (queued, or its retry time came).
	TaskStarted(wait time.Duration)
	// TaskEnded: a task ended with status, ran after it started.
	TaskEnded(status sdk.TaskStatus, ran time.Duration)
}

// noObserver is the Observer of a Config that names none.
type noObserver struct{}

func (noObserver) TaskStarted(time.Duration)               {}
func (noObserver) TaskEnded(sdk.TaskStatus, time.Duration) {}

// runnableSince is when a queued task became runnable: its last write
// (queued, or queued again) or, when later, its retry time.
func runnableSince(t *stored.Task) time.Time {
	if t.RetryAt.After(t.UpdatedAt) {
		return t.RetryAt
	}
	return t.UpdatedAt
}
