package scheduler

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/lifecycle"
	"github.com/flowgate/flowgate/host/throttle"
)

// Defaults for Config.
const (
	DefaultTick       = time.Second
	DefaultHistoryMax = 2000
	DefaultHistoryAge = 7 * 24 * time.Hour
)

// cronRuntime is the runtime of the tasks the Scheduler creates.
const cronRuntime = "cron"

// Config tunes a Scheduler. The zero value is ready to use.
type Config struct {
	// Now returns the current time. Nil means time.Now. The loop reads it
	// afresh on every tick, so suspends and clock jumps are seen at the
	// next tick.
	Now func() time.Time
	// Tick is how often the loop looks for due jobs and ended runs. Zero
	// means DefaultTick.
	Tick time.Duration
	// HistoryMax and HistoryAge bound each job's run history: ended runs
	// beyond the newest HistoryMax, or scheduled more than HistoryAge ago,
	// are pruned. Zero means the defaults.
	HistoryMax int
	HistoryAge time.Duration
	// SessionsDir holds one directory per named session
	// ("session:NAME"), passed to its runs as FLOWGATE_SESSION_DIR so that
	// each run can build on the last. Empty means none.
	SessionsDir string
	// DeliveryTimeout bounds one delivery attempt; zero means
	// DefaultDeliveryTimeout. DeliveryAttempts is how many times a
	// delivery is tried in all; zero means DefaultDeliveryAttempts.
	DeliveryTimeout  time.Duration
	DeliveryAttempts int
	// Logger receives tick errors. Nil discards them.
	Logger hclog.Logger
	// Observer hears when runs fire and end (metrics). Nil means none.
	Observer Observer
	// Leader, when set, confines the loops to the elected leader and
	// fences each record of a scheduled time on its leadership (see
	// Leader). Nil means this scheduler always leads (one gateway).
	Leader Leader
	// Dests checks and sends to the destination specs of jobs
	// (--announce-to, --failure-alert-to, --notify-to). Nil refuses jobs
	// that name any, and fails their deliveries.
	Dests Destinations
	// Member is this gateway's member id in an etcd installation,
	// recorded on each run it claims or records missed (Run.Member).
	// Empty means none (one gateway on bbolt).
	Member string
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Observer == nil {
		c.Observer = noObserver{}
	}
	if c.Tick <= 0 {
		c.Tick = DefaultTick
	}
	if c.HistoryMax <= 0 {
		c.HistoryMax = DefaultHistoryMax
	}
	if c.HistoryAge <= 0 {
		c.HistoryAge = DefaultHistoryAge
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.DeliveryAttempts <= 0 {
		c.DeliveryAttempts = DefaultDeliveryAttempts
	}
	return c
}

// Scheduler fires due jobs as engine tasks (command jobs) or pipeline flows
// (pipeline jobs), applies the overlap policy, records every scheduled time
// in the run history, and tracks how runs end. See the package doc.
type Scheduler struct {
	eng  *engine.Engine
	jobs *Jobs
	cfg  Config

	mu sync.Mutex // serializes ticks
	// lastPass is when the last tick that led ran (see fire); zero
	// before the first and after one that did not lead. Guarded by mu.
	lastPass time.Time
	wake     chan struct{} // something was queued for delivery

	svc lifecycle.Service // runs the scheduling and delivery loops
}

// New returns a Scheduler that keeps its records, and creates its runs'
// work, through eng; nothing runs until Start.
func New(eng *engine.Engine, cfg Config) *Scheduler {
	cfg = cfg.WithDefaults()
	return &Scheduler{
		eng: eng, cfg: cfg, jobs: NewJobs(eng, JobsConfig{Now: cfg.Now, Dests: cfg.Dests}), wake: make(chan struct{}, 1),
		svc: lifecycle.Service{Name: "scheduler"},
	}
}

// Jobs returns the job store the Scheduler reads.
func (s *Scheduler) Jobs() *Jobs { return s.jobs }

// Start rebuilds the indexes (Reindex), then runs two loops until Stop:
// the scheduling loop (a tick at once, then one every Tick) and the
// delivery loop (see DeliverOnce). ctx bounds only the start, not the
// loops. If Reindex fails, nothing runs and the error, prefixed
// "scheduler: start:", is returned. Calling Start on a started Scheduler
// does nothing.
func (s *Scheduler) Start(ctx context.Context) error {
	return s.svc.Start(ctx, func(context.Context) error {
		if err := s.Reindex(); err != nil {
			return err
		}
		s.mu.Lock()
		s.lastPass = time.Time{} // the time since Stop was downtime
		s.mu.Unlock()
		s.svc.Go(func(ctx context.Context) { s.repeat(ctx, "scheduler tick", nil, s.safeTick) })
		s.svc.Go(func(ctx context.Context) { s.repeat(ctx, "scheduler: deliveries", s.wake, s.DeliverOnce) })
		return nil
	})
}

// Stop ends both loops and waits for the tick and the deliveries in
// progress, or for ctx (then the error says "scheduler: stop:"). Runs
// already started keep running; the next Start follows them again.
// Calling Stop on a stopped Scheduler does nothing.
func (s *Scheduler) Stop(ctx context.Context) error { return s.svc.Stop(ctx) }

// repeat runs pass at once, then every Tick and whenever wake fires (a
// nil wake never does), until ctx ends. A pass's error is logged with
// what, at most once per throttle.DefaultEvery; the loop goes on. After a
// pass the store failed to write (a full disk), passes hold back (see
// package throttle) until the next one that succeeds.
func (s *Scheduler) repeat(ctx context.Context, what string, wake <-chan struct{}, pass func(context.Context) error) {
	t := time.NewTicker(s.cfg.Tick)
	defer t.Stop()
	var hold throttle.Backoff
	log := &throttle.Log{Logger: s.cfg.Logger}
	for {
		if hold.Wait() == 0 {
			if err := hold.Observe(pass(ctx)); err != nil && ctx.Err() == nil {
				log.Error(what, "error", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
	}
}

// safeTick is TickOnce with a panic turned into an error, so one bad job
// or record never stops the loop silently.
func (s *Scheduler) safeTick(ctx context.Context) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tick panicked: %v", p)
		}
	}()
	return s.TickOnce(ctx)
}
