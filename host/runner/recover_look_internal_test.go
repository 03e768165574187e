package runner

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// Reattached attempts take their first looks in turns of the runner's
// slots; an attempt the runner launched takes none, a turn ends once
// however often its end is called, and a runner stopping meanwhile
// (ctx ended) gives up the wait.
func TestLookTurns(t *testing.T) {
	t.Parallel()
	r := &Runner{looks: make(chan struct{}, 2)}
	ctx := context.Background()
	reattached := func() *attempt { return newAttempt("task", 1, t.TempDir(), nil) }

	end1 := r.lookTurn(ctx, reattached())
	end2 := r.lookTurn(ctx, reattached())
	require.Len(t, r.looks, 2, "two turns taken")

	r.lookTurn(ctx, newAttempt("task", 1, t.TempDir(), &ShimRun{}))()
	require.Len(t, r.looks, 2, "a launched attempt took a turn")

	stopped, cancel := context.WithCancel(ctx)
	cancel()
	r.lookTurn(stopped, reattached())()
	require.Len(t, r.looks, 2, "a wait given up took or ended a turn")

	end1()
	end1()
	require.Len(t, r.looks, 1, "an ended turn was given back more than once")
	end3 := r.lookTurn(ctx, reattached()) // the slot given back: no wait
	require.Len(t, r.looks, 2)
	end2()
	end3()
	require.Empty(t, r.looks)
}
