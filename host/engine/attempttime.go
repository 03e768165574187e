package engine

import (
	"slices"
	"time"

	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// maxAttemptTimes bounds a task's AttemptTimes: the latest are kept, as
// in its attempt log, so a task retried a hundred times stays small.
const maxAttemptTimes = 32

// startAttemptTime records on task that its attempt task.Attempts starts
// at now. It is written with the start itself, in the same transaction:
// the times cost no write of their own.
func startAttemptTime(task *stored.Task, now time.Time) {
	times := append(slices.Clone(task.AttemptTimes), sdk.AttemptTime{Attempt: task.Attempts, StartedAt: now})
	if over := len(times) - maxAttemptTimes; over > 0 {
		times = times[over:]
	}
	task.AttemptTimes = times
}

// endAttemptTime records on task that its running attempt ended at now:
// it failed and is queued again, or the task ended. A task that never
// started (cancelled while queued) or whose start predates AttemptTimes
// has no open attempt, and nothing changes.
func endAttemptTime(task *stored.Task, now time.Time) {
	n := len(task.AttemptTimes)
	if n == 0 || !task.AttemptTimes[n-1].EndedAt.IsZero() || task.AttemptTimes[n-1].Attempt != task.Attempts {
		return
	}
	task.AttemptTimes = slices.Clone(task.AttemptTimes)
	task.AttemptTimes[n-1].EndedAt = now
}
