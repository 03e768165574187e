package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
)

// The names of the figures, in the order of the report.
const (
	FigFsync          = "raw_fsync"
	FigUpdate1        = "guarded_update_1_writer"
	FigUpdateN        = "guarded_update_many_writers"
	FigDispatch       = "task_dispatch"
	FigTaskFiles      = "task_files"
	FigStoreWriter    = "store_writer_busy"
	FigController     = "controller_round_trip"
	FigControllerRead = "controller_round_trip_read"
	FigList           = "flow_list"
	FigListAll        = "flow_list_all"
	FigRestart        = "gateway_restart"
	FigRSS            = "gateway_rss"
	FigTaskCPU        = "task_cpu"
	FigRunning        = "tasks_running_at_once"
	FigStartLatency   = "created_to_started"
	FigTasksRun       = "tasks_run_no_gateway"
	FigStartStop      = "inprocess_gateway_start_stop"
	FigChainGateway   = "workflow_20_steps_gateway"
	FigChainCold      = "workflow_20_steps_no_gateway"
	FigForEach        = "workflow_for_each_100"
	FigChainFloor     = "workflow_step_floor"
)

// listPage is the CLI's default page size (cli's defaultListLimit), the
// limit of the flow_list figure.
const listPage = 100

// run is one bench run: its config, its scratch directory and its
// progress.
type run struct {
	cfg   Config
	sz    Sizes
	tmp   string
	start time.Time
	// skipped lists the figures left out, each with why (Report.Skipped).
	skipped []string
	// etcd are the engines of a store run's etcd clients (Config.Store).
	etcd []*engine.Engine
	// etcdStore is the first of those clients' store.
	etcdStore store.Store
	// guardedMany is the many-writer guarded update rate the updates
	// phase measured: the baseline of the trigger deliveries.
	guardedMany float64
}

// phase is one part of a run.
type phase struct {
	title string
	// estimate is how long it is expected to take, for progress lines.
	estimate time.Duration
	do       func(ctx context.Context) ([]Figure, error)
}

// Run measures every figure on the file system of cfg.Dir, in a scratch
// directory it removes at the end, also when ctx is cancelled (every
// process it started is stopped first). It writes progress to
// cfg.Progress. It returns the report, or the first error; a cancelled
// run returns ctx's error.
func Run(ctx context.Context, cfg Config) (rep Report, err error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return rep, err
	}
	if cfg.Self == "" {
		if cfg.Self, err = os.Executable(); err != nil {
			return rep, fmt.Errorf("bench: find the flowgate executable that serves shims and plugins: %w", err)
		}
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return rep, fmt.Errorf("bench: %w", err)
	}
	tmp, err := os.MkdirTemp(cfg.Dir, "flowgate-bench-")
	if err != nil {
		return rep, fmt.Errorf("bench: make the scratch directory: %w", err)
	}
	defer func() {
		if rerr := os.RemoveAll(tmp); rerr != nil {
			err = errors.Join(err, fmt.Errorf("bench: remove the scratch directory: %w", rerr))
		}
	}()
	r := &run{cfg: cfg, sz: cfg.Sizes, tmp: tmp, start: time.Now()}
	if cfg.Store.URL != "" {
		var done func() error
		if r.etcd, r.etcdStore, done, err = openEtcd(cfg.Store); err != nil {
			return rep, fmt.Errorf("bench: %w", err)
		}
		defer func() { err = errors.Join(err, done()) }()
	}
	dir, _ := filepath.Abs(cfg.Dir)
	rep = Report{Dir: dir, Quick: cfg.Quick, Sizes: r.sz, Started: r.start,
		Machine: Machine{CPUs: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}}

	phases := r.phases()
	left := time.Duration(0)
	for _, p := range phases {
		left += p.estimate
	}
	r.progress("flowgate bench: %d phases, about %s in all; scratch directory %s (removed at the end)", len(phases), round(left), tmp)
	for i, p := range phases {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		r.progress("[%d/%d] %s (about %s)", i+1, len(phases), p.title, round(p.estimate))
		t0 := time.Now()
		figs, err := p.do(ctx)
		if ctx.Err() != nil {
			return rep, ctx.Err() // also when the phase finished meanwhile
		}
		if err != nil {
			return rep, fmt.Errorf("bench: %s: %w", p.title, err)
		}
		left -= p.estimate
		r.progress("[%d/%d] done in %s; about %s left", i+1, len(phases), round(time.Since(t0)), round(max(left, 0)))
		for _, f := range figs {
			f.judge()
			rep.Figures = append(rep.Figures, f)
		}
	}
	rep.Seconds = time.Since(r.start).Seconds()
	rep.Skipped = r.skipped
	rep.Verdict = verdict(rep.Figures)
	return rep, nil
}

// phases lists the parts of the run with their estimates, from the sizes
// and the costs seen on a 2-core VM.
func (r *run) phases() []phase {
	s := r.sz
	rounds := time.Duration(s.Rounds)
	updates := phase{fmt.Sprintf("raw fsync and guarded flow updates: %d rounds of probe, 1 writer, %d writers", s.Rounds, s.Writers),
		rounds * (s.Probe + 2*s.Updates), r.updates}
	if r.cfg.Store.URL != "" {
		return []phase{{fmt.Sprintf("raw fsync, guarded flow updates and task claims on bbolt and etcd: %d rounds of probe, 1 writer, %d writers on each, %d tasks claimed by %d gateways on each",
			s.Rounds, s.Writers, s.ClaimTasks, claimers), rounds * (s.Probe + 4*s.Updates + time.Duration(s.ClaimTasks)*10*time.Millisecond), r.updates}}
	}
	return []phase{
		updates,
		{fmt.Sprintf("task dispatch: %d rounds of %d tasks of true through a gateway, then by bare fork/exec", s.Rounds, s.DispatchTasks),
			rounds * time.Duration(s.DispatchTasks) * 11 * time.Millisecond, r.dispatch},
		{fmt.Sprintf("created to started: %d tasks of true one at a time", s.DispatchTasks/10),
			time.Duration(s.DispatchTasks/10) * 30 * time.Millisecond, r.startLatency},
		{fmt.Sprintf("webhook triggers: %d rounds of deliveries by %d senders, and of %d deliveries one at a time to a workflow", s.Rounds, hookSenders, max(s.DispatchTasks/10/s.Rounds, 1)),
			rounds * (s.Updates + time.Duration(max(s.DispatchTasks/10/s.Rounds, 1))*40*time.Millisecond), r.triggers},
		{fmt.Sprintf("commands with no gateway: %d runs of tasks run true, and of an in-process gateway's start and stop", s.Rounds*5),
			time.Duration(s.Rounds*5) * 400 * time.Millisecond, r.commands},
		{fmt.Sprintf("workflows against Lobster (npm install %s): %d rounds of a 20-step chain, a 100-way for_each and a 10-stage pipeline string", lobsterPackage, s.Rounds),
			20*time.Second + rounds*10*time.Second, r.lobster},
		{fmt.Sprintf("controller round trip: %d rounds of %d events to the pipeline plugin, then in process", s.Rounds, s.ControllerCalls),
			2*time.Second + rounds*time.Duration(s.ControllerCalls)*6*time.Millisecond, r.controller},
		{fmt.Sprintf("create %s flows (and %s for the baseline) with %d writers", thousands(int64(s.Flows)), thousands(int64(s.Flows/100)), s.Writers),
			time.Duration(s.Flows) * 100 * time.Microsecond, r.populate},
		{fmt.Sprintf("tasks flow list: %d rounds over %s flows and over %s", s.Rounds, thousands(int64(s.Flows)), thousands(int64(s.Flows/100))),
			rounds * time.Duration(s.ListCalls) * time.Duration(s.Flows) * 15 * time.Microsecond, r.list},
		{fmt.Sprintf("run center flow list: %d rounds of its first page over %s flows and over %s", s.Rounds, thousands(int64(s.Flows)), thousands(int64(s.Flows/100))),
			2*time.Second + rounds*time.Duration(s.ListCalls)*20*time.Millisecond, r.runCenter},
		{fmt.Sprintf("gateway restart: start %d tasks of sleep %d, then %d rounds of restarts over an empty home and over %s flows", s.RunningTasks, sleeperSeconds, s.Rounds, thousands(int64(s.Flows))),
			time.Duration(s.RunningTasks)*60*time.Millisecond + rounds*2*time.Second, r.restart},
	}
}

// progress writes one progress line.
func (r *run) progress(format string, args ...any) {
	fmt.Fprintf(r.cfg.Progress, "%6.1fs  %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
}

// round rounds d for people: whole seconds, or minutes and seconds.
func round(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	}
	d = d.Round(10 * time.Second)
	return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}
