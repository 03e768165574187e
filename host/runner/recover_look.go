package runner

import (
	"context"
	"sync"
)

// lookTurn waits for a's turn at its first look when a is an attempt a
// starting runner reattached (one with no ShimRun), and returns what ends
// the turn; calling it again does nothing. An attempt this runner
// launched takes no turn.
//
// Why turns: a reattached attempt's first look reads its record, checks
// its shim's identity and starts watching its exit, a few file reads and
// system calls. A restart that finds a thousand running tasks would
// otherwise make a thousand such looks runnable at once, and everything
// else the start does (the reattaching itself, the other parts, the
// socket) would queue behind them for the CPU: on a 2-core VM, seconds.
// In turns of recoverWorkers, the start goes on beside them and the
// looks follow in a fraction of a second.
func (r *Runner) lookTurn(ctx context.Context, a *attempt) func() {
	if a.run != nil {
		return func() {}
	}
	select {
	case r.looks <- struct{}{}:
		return sync.OnceFunc(func() { <-r.looks })
	case <-ctx.Done():
		return func() {}
	}
}
