package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/stored"
)

// A shim records its own pid before its child starts: the history says
// so, rather than "runs as pid 0".
func TestTaskBookkeepingNamesTheShimBeforeItsChild(t *testing.T) {
	t.Parallel()
	queued := &stored.Task{}
	shim := &stored.Task{ShimPID: 41}
	child := &stored.Task{ShimPID: 41, PID: 42}
	require.Equal(t, "shim pid 41 started; its child has not started yet", taskBookkeeping(queued, shim))
	require.Equal(t, "runs as pid 42 under shim pid 41", taskBookkeeping(shim, child))
}
