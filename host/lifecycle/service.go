package lifecycle

import (
	"context"
	"fmt"
	"sync"
)

// Service is the start/stop state of one long-running part. The zero value
// is a stopped part with no name; set Name (used in errors) before Start.
type Service struct {
	// Name says which part this is in errors ("runner", "scheduler", …).
	Name string

	life sync.Mutex // serialises Start and Stop

	mu     sync.Mutex // guards ctx and cancel; never held while waiting
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start starts the part: it runs setup with a context that is cancelled by
// Stop, not by ctx. A setup error stops whatever setup launched with Go and
// is returned as an *Error naming the part. Calling Start on a started
// part does nothing and returns nil.
func (s *Service) Start(ctx context.Context, setup func(ctx context.Context) error) error {
	s.life.Lock()
	defer s.life.Unlock()
	s.mu.Lock()
	if s.cancel != nil {
		s.mu.Unlock()
		return nil
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.ctx, s.cancel = runCtx, cancel
	s.mu.Unlock()
	if setup == nil {
		return nil
	}
	if err := setup(runCtx); err != nil {
		if serr := s.stop(ctx); serr != nil {
			err = fmt.Errorf("%w (and stopping what it began: %v)", err, serr)
		}
		return &Error{Part: s.Name, Op: "start", Err: err}
	}
	return nil
}

// Go runs fn in a goroutine that Stop cancels (through fn's context) and
// waits for. It reports false, and runs nothing, when the part is stopped.
func (s *Service) Go(fn func(ctx context.Context)) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel == nil {
		return false
	}
	ctx := s.ctx
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		fn(ctx)
	}()
	return true
}

// Running reports whether the part is started.
func (s *Service) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancel != nil
}

// Stop cancels the part's goroutines and waits for them to return, or for
// ctx to end, whichever is first; the error is then an *Error naming the
// part. Calling
// Stop on a stopped part does nothing and returns nil.
func (s *Service) Stop(ctx context.Context) error {
	s.life.Lock()
	defer s.life.Unlock()
	return s.stop(ctx)
}

func (s *Service) stop(ctx context.Context) error {
	s.mu.Lock()
	cancel := s.cancel
	s.ctx, s.cancel = nil, nil
	s.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	// No Go can Add now: cancel is nil under mu, so waiting is safe.
	stopped := make(chan struct{})
	go func() { s.wg.Wait(); close(stopped) }()
	select {
	case <-stopped:
		return nil
	case <-ctx.Done():
		return &Error{Part: s.Name, Op: "stop", Err: ctx.Err()}
	}
}
