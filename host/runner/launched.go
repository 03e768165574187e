package runner

import (
	"context"
	"time"

	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// launchWait bounds AwaitLaunched: a gateway that has not launched a task
// in this long is busy (its admission cap is reached), and the task waits
// in the queue for the next one.
const launchWait = 10 * time.Second

// Launched reports whether task t, as last read, no longer needs a
// gateway to start: it ended, waits for a retry, or the shim of its
// current attempt, under home's task logs, claimed it. A task merely
// taken out of the queue is not launched: a gateway that stops before
// its shim starts puts it back in the queue. When the claim cannot be
// read, Launched answers true, the side that never waits forever.
func Launched(home string, t *stored.Task) bool {
	switch {
	case t.Status.Terminal(), t.Status == sdk.TaskQueued && !t.RetryAt.IsZero():
		return true
	case t.Status != sdk.TaskRunning:
		return false
	}
	claimed, err := shim.Claimed(LogDir(home, t.ID, t.Attempts))
	return claimed || err != nil
}

// AwaitLaunched re-reads task t with get until it is Launched, for at
// most ten seconds, and returns it as last read. A command that hosts a
// gateway for its own duration calls it before it stops that gateway, so
// that the task it queued has started. It fails when get fails or ctx
// ends (returning the task as last read with ctx's error).
func AwaitLaunched(ctx context.Context, home string, t *stored.Task, get func(ctx context.Context, id string) (*stored.Task, error)) (*stored.Task, error) {
	deadline := time.Now().Add(launchWait)
	for !Launched(home, t) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		var err error
		if t, err = get(ctx, t.ID); err != nil {
			return nil, err
		}
	}
	return t, nil
}
