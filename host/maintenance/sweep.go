package maintenance

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/lifecycle"
	"github.com/flowgate/flowgate/host/throttle"
)

// Defaults for SweepConfig.
const (
	DefaultSweepInterval = 60 * time.Second
	DefaultSweepFirst    = 5 * time.Second
)

// SweepConfig tunes a Sweeper. The zero value is ready to use.
type SweepConfig struct {
	// Interval is the time between two passes; zero means
	// DefaultSweepInterval.
	Interval time.Duration
	// First is the wait before the first pass after Start; zero means
	// DefaultSweepFirst.
	First time.Duration
	// Pass configures each pass. Apply and Quick are always set.
	Pass Config
	// Logger receives a line per pass that changed something (info), per
	// quiet pass (debug), and errors (a repeated one at most once per
	// throttle.DefaultEvery). Nil discards them.
	Logger hclog.Logger
}

// Sweeper runs a quick, applying maintenance pass (see the package doc)
// periodically in its own goroutine, the gateway's sweep. Each pass first
// denies the gates whose deadline passed (engine.ExpireGates), so a gate
// timeout is enforced at most an Interval late, and across restarts: the
// deadline is in the flow's wait. A pass is a
// series of short engine transactions, so task execution never waits for
// a sweep; a pass still running when the next is due delays it rather
// than overlapping it.
type Sweeper struct {
	eng  *engine.Engine
	cfg  SweepConfig
	life lifecycle.Service

	// errLog throttles the error lines, which a fault that lasts (a full
	// disk) repeats at every pass.
	errLog *throttle.Log

	mu     sync.Mutex
	last   Summary
	passes int
}

// NewSweeper returns a Sweeper over eng; nothing runs until Start.
func NewSweeper(eng *engine.Engine, cfg SweepConfig) *Sweeper {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultSweepInterval
	}
	if cfg.First <= 0 {
		cfg.First = DefaultSweepFirst
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	cfg.Pass.Apply, cfg.Pass.Quick = true, true
	return &Sweeper{eng: eng, cfg: cfg, life: lifecycle.Service{Name: "maintenance sweep"}, errLog: &throttle.Log{Logger: cfg.Logger}}
}

// Start begins sweeping: the first pass after First, then one every
// Interval. It has nothing that can fail and returns nil; it returns an
// error to share the lifecycle of the gateway's other parts. Calling Start
// on a started Sweeper does nothing.
func (s *Sweeper) Start(ctx context.Context) error {
	return s.life.Start(ctx, func(context.Context) error {
		s.life.Go(s.loop)
		return nil
	})
}

// Stop ends sweeping and waits for a pass in progress, or for ctx.
// Calling Stop on a stopped Sweeper does nothing.
func (s *Sweeper) Stop(ctx context.Context) error { return s.life.Stop(ctx) }

// Last returns the summary of the last pass and how many passes ran.
func (s *Sweeper) Last() (Summary, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last, s.passes
}

func (s *Sweeper) loop(ctx context.Context) {
	t := time.NewTimer(s.cfg.First)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.pass(ctx)
		t.Reset(s.cfg.Interval)
	}
}

func (s *Sweeper) pass(ctx context.Context) {
	start := time.Now()
	s.expireGates()
	sum, err := Run(ctx, s.eng, s.cfg.Pass)
	if ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	s.last, s.passes = sum, s.passes+1
	s.mu.Unlock()
	if err != nil {
		s.errLog.Error("maintenance sweep", "error", err)
		return
	}
	args := []any{
		"tasks_lost", sum.Tasks.Reconciled, "flows_reconciled", sum.TaskFlows.Reconciled,
		"flows_pruned", sum.TaskFlows.Pruned, "logs_removed", sum.LogsRemoved, "took", time.Since(start).Round(time.Millisecond),
	}
	for _, e := range sum.Errors {
		s.errLog.Warn("maintenance sweep", "error", e)
	}
	if sum.Tasks.Reconciled+sum.TaskFlows.Reconciled+sum.TaskFlows.Pruned > 0 {
		s.cfg.Logger.Info("maintenance sweep", args...)
		return
	}
	s.cfg.Logger.Debug("maintenance sweep", args...)
}

// expireGates denies the gates past their deadline, logging each.
func (s *Sweeper) expireGates() {
	ids, err := s.eng.ExpireGates()
	for _, id := range ids {
		s.cfg.Logger.Info("gate expired: denied as gate-expired", "flow", id)
	}
	if err != nil {
		s.errLog.Error("maintenance sweep: expire gates", "error", err)
	}
}
