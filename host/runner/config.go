package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Config tunes a Runner. Home is required; every other zero field takes its
// default.
type Config struct {
	// Home is the flowgate home; task logs go under Home/logs.
	Home string
	// MaxRunning caps the tasks running at once; the rest wait, FIFO. If
	// zero, 8.
	MaxRunning int
	// Launch starts the shim for an attempt directory with env as its
	// whole environment and returns its process. env carries the spec
	// (shim.SpecEntry), which shim.Launch hands to the shim on a pipe, so
	// a Launch must start the shim through shim.Launch. If nil, Shims
	// starts them: the lean shim binary (ShimBinary) next to the
	// executable as "flowgate-shim <dir>" or as a warm shim handed the
	// attempt, or, when there is none or it was built from another
	// version, the executable as "<exe> shim <dir>"; each detached in its
	// own session.
	Launch func(dir string, env []string) (*os.Process, error)
	// Shims starts the shims when Launch is nil; nil means NewShims of
	// the running executable. While the runner runs, it keeps one warm
	// shim of Shims waiting for the next task (Shims.KeepWarm). Shims is
	// not used when Launch is set.
	Shims *Shims
	// IdleShims and ShimIdleTimeout, when not zero, set the MaxIdle and
	// IdleTimeout of Shims (see KeepWarm).
	IdleShims       int
	ShimIdleTimeout time.Duration
	// Poll is how often a running task's progress and status files are
	// read. If zero, 100ms.
	Poll time.Duration
	// Grace is how long a task has between SIGTERM and SIGKILL. If zero,
	// 5s.
	Grace time.Duration
	// Now is the clock; if nil, time.Now.
	Now func() time.Time
	// Rand returns a uniform number in [0,1) for retry jitter; if nil,
	// math/rand/v2.
	Rand func() float64
	// Logger receives the runner's log lines; if nil, they are discarded.
	Logger hclog.Logger
	// FailurePatterns replace, per task runtime, the default patterns
	// that classify a failure (see DefaultFailurePatterns). If nil, every
	// runtime uses the defaults.
	FailurePatterns map[string]FailurePatterns
	// Diagnoser is asked for advice on failures that need a diagnosis.
	// If its Command is empty, there is none, and such failures follow
	// the task's retry policy.
	Diagnoser DiagnoserConfig
	// Observer hears of task starts and ends (metrics). If nil, nothing
	// does.
	Observer Observer
	// Probe says how the network is checked before a retry after a
	// transient failure (see ProbeConfig).
	Probe ProbeConfig
	// Labels are this gateway's labels (cluster.labels): it starts a task
	// that asks for a label (TaskSpec.On) only when they hold it.
	Labels []string
	// StageSecretEnv lists the gateway's environment variables a pipeline
	// stage's task may name in its SecretEnv (the config's
	// pipeline.secret_env): such a task gets their values from this
	// process's environment when it starts, so nothing is stored and a
	// task that starts after a restart gets them again.
	StageSecretEnv []string
	// Cluster says, for the member id a running task names
	// (stored.Task.Gateway), whether that gateway ran on this machine and
	// whether it is still a member. If nil, every task is this machine's
	// (one gateway).
	Cluster func(gateway string) (thisMachine, member bool)
	// Member is this gateway's member id on an etcd installation,
	// recorded on each task it starts (stored.Task.Gateway); empty with one
	// gateway.
	Member string
	// Draining, when set and true, keeps the runner from starting queued
	// tasks (the gateway was drained); the running ones go on. If nil,
	// never.
	Draining func() bool
	// Departures, when set with Cluster, gives the ids of the members
	// that leave the installation from now on (etcd.Roster.Departures):
	// at each, and every Sweep, the runner takes over the running tasks
	// of gateways no longer members (marks them lost, or queues them
	// again when safe to repeat). If nil, only Start does, for the tasks
	// of other machines.
	Departures func(ctx context.Context) <-chan string
	// Sweep is how often the runner looks for tasks of gateways that
	// left without it hearing of it (Departures); if zero, DefaultSweep.
	Sweep time.Duration
}

// WithDefaults returns a copy of c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.MaxRunning == 0 {
		c.MaxRunning = 8
	}
	if c.Poll == 0 {
		c.Poll = 100 * time.Millisecond
	}
	if c.Grace == 0 {
		c.Grace = 5 * time.Second
	}
	if c.Sweep == 0 {
		c.Sweep = DefaultSweep
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Float64
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	switch {
	case c.Launch != nil:
		c.Shims = nil
	case c.Shims != nil:
		c.Launch = c.Shims.Launch
	default:
		c.Shims, c.Launch = defaultShims(c.Logger)
	}
	if c.Shims != nil && c.IdleShims != 0 {
		c.Shims.MaxIdle = c.IdleShims
	}
	if c.Shims != nil && c.ShimIdleTimeout != 0 {
		c.Shims.IdleTimeout = c.ShimIdleTimeout
	}
	if c.Observer == nil {
		c.Observer = noObserver{}
	}
	c.Diagnoser = c.Diagnoser.WithDefaults()
	c.Probe = c.Probe.WithDefaults()
	return c
}

// Validate names the first field that holds an impossible value.
func (c Config) Validate() error {
	switch {
	case c.Home == "":
		return errors.New("runner config: Home is required")
	case c.MaxRunning < 1:
		return fmt.Errorf("runner config: MaxRunning must be at least 1 (got %d)", c.MaxRunning)
	case c.Poll < 0 || c.Grace < 0 || c.Sweep < 0:
		return errors.New("runner config: Poll, Grace and Sweep must not be negative")
	}
	if err := c.Probe.Validate(); err != nil {
		return fmt.Errorf("runner config: %w", err)
	}
	return c.Diagnoser.Validate()
}
