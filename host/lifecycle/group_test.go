package lifecycle_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/lifecycle"
)

// A group started in steps (a part built from what an earlier step
// opened) has one way back: a part that fails in a later step stops the
// parts of every earlier step too, in reverse, and leaves the group
// empty.
func TestGroupStartedInStepsUndoesEveryStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var log []string
	g := &lifecycle.Group{}
	require.NoError(t, g.Start(ctx, lifecycle.Named{Name: "store", Part: part{name: "store", log: &log}}))
	require.NoError(t, g.Start(ctx,
		lifecycle.Named{Name: "runner", Part: part{name: "runner", log: &log}},
		lifecycle.Named{Name: "scheduler", Part: part{name: "scheduler", log: &log}},
	))
	err := g.Start(ctx,
		lifecycle.Named{Name: "web listener", Part: part{name: "web", log: &log}},
		lifecycle.Named{Name: "socket", Part: part{name: "socket", log: &log, startErr: errors.New("not a socket")}},
	)
	require.EqualError(t, err, "socket: start: not a socket")
	require.Equal(t, []string{"start store", "start runner", "start scheduler", "start web",
		"stop web", "stop scheduler", "stop runner", "stop store"}, log)

	log = nil
	require.NoError(t, g.Stop(ctx), "the failed start left the group empty")
	require.Empty(t, log)
}

// failStop is a part that fails to stop.
type failStop struct{ err error }

func (failStop) Start(context.Context) error  { return nil }
func (p failStop) Stop(context.Context) error { return p.err }

// When undoing a failed start, a part that also fails to stop is
// reported with the failure to start, each by name.
func TestGroupStartReportsWhatFailedToStopOnTheWayBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stuck := errors.New("requests still in flight")
	g := &lifecycle.Group{}
	err := g.Start(ctx,
		lifecycle.Named{Name: "web listener", Part: failStop{err: stuck}},
		lifecycle.Named{Name: "socket", Part: part{name: "socket", log: new([]string), startErr: errors.New("not a socket")}},
	)
	require.ErrorContains(t, err, "socket: start: not a socket")
	require.ErrorContains(t, err, "web listener: stop: requests still in flight")
	require.ErrorIs(t, err, stuck)
}
