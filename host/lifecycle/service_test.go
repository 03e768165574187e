package lifecycle_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/lifecycle"
)

func TestServiceStartStopIdempotent(t *testing.T) {
	t.Parallel()
	s := &lifecycle.Service{Name: "loop"}
	require.NoError(t, s.Stop(context.Background()), "stopping a part never started")
	ticks := make(chan struct{}, 1)
	starts := 0
	setup := func(ctx context.Context) error {
		starts++
		s.Go(func(ctx context.Context) {
			ticks <- struct{}{}
			<-ctx.Done()
		})
		return nil
	}
	require.NoError(t, s.Start(context.Background(), setup))
	require.NoError(t, s.Start(context.Background(), setup))
	require.Equal(t, 1, starts, "a second Start does nothing")
	require.True(t, s.Running())
	<-ticks
	require.NoError(t, s.Stop(context.Background()))
	require.False(t, s.Running())
	require.False(t, s.Go(func(context.Context) {}), "Go on a stopped part runs nothing")
	require.NoError(t, s.Stop(context.Background()))

	require.NoError(t, s.Start(context.Background(), setup), "a stopped part starts again")
	require.Equal(t, 2, starts)
	require.NoError(t, s.Stop(context.Background()))
}

func TestServiceStartContextIsNotTheRunContext(t *testing.T) {
	t.Parallel()
	s := &lifecycle.Service{Name: "loop"}
	ctx, cancel := context.WithCancel(context.Background())
	var run context.Context
	require.NoError(t, s.Start(ctx, func(c context.Context) error { run = c; return nil }))
	cancel()
	require.NoError(t, run.Err(), "cancelling Start's ctx must not stop the part")
	require.NoError(t, s.Stop(context.Background()))
	require.Error(t, run.Err(), "Stop cancels the run context")
}

func TestServiceFailedSetupStopsWhatItLaunched(t *testing.T) {
	t.Parallel()
	s := &lifecycle.Service{Name: "scheduler"}
	var exited sync.WaitGroup
	exited.Add(1)
	err := s.Start(context.Background(), func(ctx context.Context) error {
		s.Go(func(ctx context.Context) { defer exited.Done(); <-ctx.Done() })
		return errors.New("rebuild index: disk full")
	})
	require.EqualError(t, err, "scheduler: start: rebuild index: disk full")
	exited.Wait() // returns only because the failed start cancelled the goroutine
	require.False(t, s.Running())
}

func TestServiceStopGivesUpAtTheDeadline(t *testing.T) {
	t.Parallel()
	s := &lifecycle.Service{Name: "runner"}
	release := make(chan struct{})
	require.NoError(t, s.Start(context.Background(), func(context.Context) error {
		s.Go(func(context.Context) { <-release }) // ignores cancellation
		return nil
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err := s.Stop(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "runner: stop")
	close(release)
}

type part struct {
	name     string
	startErr error
	log      *[]string
}

func (p part) Start(context.Context) error {
	if p.startErr != nil {
		return p.startErr
	}
	*p.log = append(*p.log, "start "+p.name)
	return nil
}

func (p part) Stop(context.Context) error {
	*p.log = append(*p.log, "stop "+p.name)
	return nil
}

func TestStartAllStopsInReverseAndNamesTheFailure(t *testing.T) {
	t.Parallel()
	var log []string
	_, err := lifecycle.StartAll(context.Background(),
		lifecycle.Named{Name: "runner", Part: part{name: "runner", log: &log}},
		lifecycle.Named{Name: "supervisor", Part: part{name: "supervisor", log: &log}},
		lifecycle.Named{Name: "scheduler", Part: part{name: "scheduler", log: &log, startErr: errors.New("bad job")}},
		lifecycle.Named{Name: "sweep", Part: part{name: "sweep", log: &log}},
	)
	require.EqualError(t, err, "scheduler: start: bad job")
	require.Equal(t, []string{"start runner", "start supervisor", "stop supervisor", "stop runner"}, log)

	log = nil
	g, err := lifecycle.StartAll(context.Background(),
		lifecycle.Named{Name: "a", Part: part{name: "a", log: &log}},
		lifecycle.Named{Name: "b", Part: part{name: "b", log: &log}},
	)
	require.NoError(t, err)
	require.NoError(t, g.Stop(context.Background()))
	require.NoError(t, g.Stop(context.Background()))
	require.Equal(t, []string{"start a", "start b", "stop b", "stop a"}, log)
}

// svcPart is a part built on Service, as the gateway's parts are.
type svcPart struct {
	svc lifecycle.Service
	err error
}

func (p *svcPart) Start(ctx context.Context) error {
	return p.svc.Start(ctx, func(context.Context) error { return p.err })
}

func (p *svcPart) Stop(ctx context.Context) error { return p.svc.Stop(ctx) }

func TestStartAllNamesAServicePartOnce(t *testing.T) {
	t.Parallel()
	cause := errors.New("create task log directory: not a directory")
	p := &svcPart{svc: lifecycle.Service{Name: "runner"}, err: cause}
	_, err := lifecycle.StartAll(context.Background(), lifecycle.Named{Name: "runner", Part: p})
	require.EqualError(t, err, "runner: start: create task log directory: not a directory")
	require.ErrorIs(t, err, cause)
	le, ok := errors.AsType[*lifecycle.Error](err)
	require.True(t, ok)
	require.Equal(t, "runner", le.Part)
	require.Equal(t, "start", le.Op)
}
