package audit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/pluginhost"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Config holds the audit's clock, thresholds and process check. The zero
// value uses the reference's defaults; every zero duration takes its
// default, and a negative one is refused by Validate.
type Config struct {
	// Now returns the current time. If nil, time.Now.
	Now func() time.Time
	// StaleQueued: a queued task this long without a change is
	// stale_queued. If zero, 10m.
	StaleQueued time.Duration
	// StaleRunning: a running task this long without a change (and with
	// no live process) is stale_running. If zero, 30m.
	StaleRunning time.Duration
	// FlowStaleRunning, FlowStaleWaiting and FlowStaleBlocked: a flow in
	// that status this long without a change (and with no active task) is
	// stale. If zero, 30m each.
	FlowStaleRunning time.Duration
	FlowStaleWaiting time.Duration
	FlowStaleBlocked time.Duration
	// CancelStuck: a flow this long past its cancel request with no active
	// task is cancel_stuck. If zero, 5m.
	CancelStuck time.Duration
	// EventsBacklog: an event undelivered this long is events_backlog. If
	// zero, 10m.
	EventsBacklog time.Duration
	// ContinuationStart: a continuation still queued without a task this
	// long after it was accepted is continuation_not_started. If zero,
	// 10m.
	ContinuationStart time.Duration
	// OrphanGrace: a process still alive this long after its task ended
	// is orphan_process. If zero, 1m.
	OrphanGrace time.Duration
	// ControllerGrace: a controller plugin starting or restarting this
	// long is controller_unavailable. If zero, 5m.
	ControllerGrace time.Duration
	// JobFailures: an enabled cron job whose last this many runs or more
	// failed in a row is cron_job_failing. If zero, 3: one failure may be
	// a blip, three in a row is a job that is broken.
	JobFailures int
	// Alive reports whether the process pid, started at startTime (as
	// recorded on the task; see shim.ProcInfo.StartTime), still runs. If nil, the
	// runner's identity check (shim.Alive): pid and start time must both
	// match.
	Alive func(pid int, startTime uint64) bool
}

// WithDefaults returns a copy of c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.StaleQueued, 10*time.Minute)
	def(&c.StaleRunning, 30*time.Minute)
	def(&c.FlowStaleRunning, 30*time.Minute)
	def(&c.FlowStaleWaiting, 30*time.Minute)
	def(&c.FlowStaleBlocked, 30*time.Minute)
	def(&c.CancelStuck, 5*time.Minute)
	def(&c.EventsBacklog, 10*time.Minute)
	def(&c.OrphanGrace, time.Minute)
	def(&c.ContinuationStart, 10*time.Minute)
	def(&c.ControllerGrace, 5*time.Minute)
	if c.JobFailures == 0 {
		c.JobFailures = 3
	}
	if c.Alive == nil {
		c.Alive = func(pid int, start uint64) bool {
			return pid > 0 && start != 0 && shim.Alive(shim.ProcInfo{PID: pid, StartTime: start})
		}
	}
	return c
}

// Validate names the first threshold that is negative.
func (c Config) Validate() error {
	if c.JobFailures < 0 {
		return fmt.Errorf("audit config: JobFailures must not be negative (got %d)", c.JobFailures)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"StaleQueued", c.StaleQueued}, {"StaleRunning", c.StaleRunning},
		{"FlowStaleRunning", c.FlowStaleRunning}, {"FlowStaleWaiting", c.FlowStaleWaiting},
		{"FlowStaleBlocked", c.FlowStaleBlocked}, {"CancelStuck", c.CancelStuck},
		{"EventsBacklog", c.EventsBacklog},
		{"OrphanGrace", c.OrphanGrace}, {"ControllerGrace", c.ControllerGrace},
	} {
		if d.v < 0 {
			return fmt.Errorf("audit config: %s must not be negative (got %s)", d.name, d.v)
		}
	}
	return nil
}

// Input is what one audit reads.
type Input struct {
	// Engine reads the records. Required.
	Engine *engine.Engine
	// Plugins is the state of the controller plugins, as a running
	// gateway's supervisor reports it. Set PluginsKnown when it is known
	// (an empty list then means no plugin is configured); without it,
	// controller_unavailable is not checked and the report says so.
	Plugins      []pluginhost.Status
	PluginsKnown bool
}

// Skip is a check the audit could not make, and why.
type Skip struct {
	Code   Code   `json:"code"`
	Reason string `json:"reason"`
}

// Report is the result of one audit: every finding, sorted (see Sort),
// their summary, and the checks that were skipped.
type Report struct {
	Findings []Finding `json:"findings"`
	Summary  Summary   `json:"summary"`
	Skipped  []Skip    `json:"skipped"`
}

// Run audits every task and flow of in.Engine at cfg.Now. It reads and
// never writes. Records that cannot be read become a restore_failed
// finding rather than an error; Run fails only on an invalid config or
// input, a cancelled ctx, or a store that cannot be read at all.
func Run(ctx context.Context, cfg Config, in Input) (Report, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	if in.Engine == nil {
		return Report{}, errors.New("audit input: Engine is required")
	}
	a := &auditor{cfg: cfg, in: in, eng: in.Engine, now: cfg.Now().UTC()}
	if err := a.run(ctx); err != nil {
		return Report{}, err
	}
	Sort(a.out)
	r := Report{Findings: a.out, Summary: Summarize(a.out), Skipped: a.skipped}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	if r.Skipped == nil {
		r.Skipped = []Skip{}
	}
	return r, nil
}

// auditor is one run's state.
type auditor struct {
	cfg     Config
	in      Input
	eng     *engine.Engine
	now     time.Time
	out     []Finding
	skipped []Skip

	flows       map[string]*sdk.Flow
	tasks       map[string]*stored.Task
	tasksByFlow map[string][]*stored.Task
	// parked holds the parked outbox event of each task, by task id.
	parked map[string]*sdk.Event
	// oldest holds each flow's oldest undelivered event and their count.
	oldest map[string]backlog
}

func (a *auditor) run(ctx context.Context) error {
	// Tasks are read before flows: a flow created in between has no task
	// yet, which no check reports before it is stale, while the reverse
	// order would show a new task's flow as missing.
	tasks, terr := a.eng.ListTasks(engine.TaskFilter{})
	flows, ferr := a.eng.ListFlows(engine.FlowFilter{})
	if err := errors.Join(terr, ferr); err != nil {
		// As in the reference, the records count as empty: checks that
		// compare records would report every one of them.
		a.out = append(a.out, Finding{Kind: KindFlow, Severity: Error, Code: RestoreFailed,
			Detail: "task-flow records could not be read: " + err.Error() + " (run flowgate check)"})
		tasks.Tasks, flows.Flows = nil, nil
	}
	a.damaged(append(tasks.Damaged, flows.Damaged...))
	a.flows = make(map[string]*sdk.Flow, len(flows.Flows))
	for _, f := range flows.Flows {
		a.flows[f.ID] = f
	}
	a.tasks, a.tasksByFlow = make(map[string]*stored.Task, len(tasks.Tasks)), map[string][]*stored.Task{}
	for _, t := range tasks.Tasks {
		a.tasks[t.ID] = t
		a.tasksByFlow[t.FlowID] = append(a.tasksByFlow[t.FlowID], t)
	}
	if err := a.readEvents(ctx, flows.Flows); err != nil {
		return err
	}
	for i, t := range tasks.Tasks {
		if i%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := a.auditTask(t); err != nil {
			return err
		}
	}
	if !a.in.PluginsKnown {
		a.skipped = append(a.skipped, Skip{Code: ControllerUnavailable,
			Reason: "no gateway runs, so the state of the controller plugins is unknown"})
	}
	for i, f := range flows.Flows {
		if i%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := a.auditFlow(f); err != nil {
			return err
		}
	}
	if err := a.auditNotices(); err != nil {
		return err
	}
	if err := a.auditJobs(); err != nil {
		return err
	}
	return a.auditIndexes()
}
