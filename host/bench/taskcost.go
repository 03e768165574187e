package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// cpuTime is the CPU time (user and system) of this process and of its
// children that have been waited for: the gateway, the shims that
// exited, and through them their tasks. A pooled shim that is still
// there is not counted: see liveChildrenCPU.
func cpuTime() time.Duration { return selfCPU() + childrenCPU() }

// selfCPU is the CPU time of this process.
func selfCPU() time.Duration { return rusage(syscall.RUSAGE_SELF) }

// childrenCPU is the CPU time of this process's children that have been
// waited for, and of those they waited for.
func childrenCPU() time.Duration { return rusage(syscall.RUSAGE_CHILDREN) }

func rusage(who int) time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// dispatchRound is what one round of the dispatch figure measured.
type dispatchRound struct {
	gateway, bare float64 // tasks/s
	cpu, bareCPU  cpuSplit
	running       float64 // tasks running at once, on average
	taskFiles     float64 // µs to make a task's four inodes beside the round's home
	// writerBusy is the store writer's share of the round's time, and
	// writerApplying the share of its own time spent in the engine's
	// functions rather than bbolt's commit.
	writerBusy, writerApplying float64
}

// dispatchFigures are the figures of the dispatch rounds: the throughput,
// CPU per task and tasks running at once.
func (r *run) dispatchFigures(rounds []dispatchRound) []Figure {
	var gw, bare, cpu, bareCPU, running, files, busy, applying []float64
	var split, bareSplit []cpuSplit
	for _, d := range rounds {
		gw, bare = append(gw, d.gateway), append(bare, d.bare)
		cpu, bareCPU, running = append(cpu, d.cpu.total()), append(bareCPU, d.bareCPU.total()), append(running, d.running)
		split, bareSplit = append(split, d.cpu), append(bareSplit, d.bareCPU)
		files = append(files, d.taskFiles)
		busy, applying = append(busy, d.writerBusy), append(applying, d.writerApplying)
	}
	return []Figure{
		{Name: FigDispatch, Title: "task dispatch through the gateway", Value: median(gw), Unit: "tasks/s", Rounds: gw,
			Baseline: median(bare), BaselineTitle: "bare fork/exec", BaselineUnit: "tasks/s",
			Target: &Target{Of: "ratio", Op: ">=", Limit: 0.3},
			Note:   fmt.Sprintf("%s tasks of true per round, %d at once; their shims come from the pool (docs/performance.md)", thousands(int64(r.sz.DispatchTasks)), r.sz.Concurrency)},
		{Name: FigTaskFiles, Title: "a task's four new inodes (directory, record, stdout, stderr), dispatch rounds", Value: median(files), Unit: "µs", Rounds: files,
			Note: taskFilesNote(median(files))},
		{Name: FigStoreWriter, Title: "the store writer's share of the dispatch rounds' time", Value: median(busy), Unit: "share", Rounds: busy,
			Note: storeWriterNote(median(busy), median(applying))},
		{Name: FigTaskCPU, Title: "CPU per task: the gateway, its shims and the tasks", Value: median(cpu), Unit: "ms", Rounds: cpu,
			Baseline: median(bareCPU), BaselineTitle: "bare fork/exec", BaselineUnit: "ms",
			Target: &Target{Of: "value", Op: "<=", Limit: 3}, Note: taskCPUNote(medianSplit(split), medianSplit(bareSplit))},
		{Name: FigRunning, Title: "tasks running at once, dispatch rounds", Value: median(running), Unit: "tasks", Rounds: running,
			Baseline: float64(r.sz.Concurrency), BaselineTitle: "allowed", BaselineUnit: "tasks",
			Target: &Target{Of: "value", Op: ">=", Limit: 7}},
	}
}

// slowTaskFiles is the cost of a task's four inodes, in µs, above which
// the file system, not flowgate, sets the dispatch figures: a quiet ext4
// makes them in 30–70 µs on this project's VM, one beside freed inodes
// in 1,100–1,800.
const slowTaskFiles = 300

// taskFilesNote says what a task_files figure of us µs means.
func taskFilesNote(us float64) string {
	if us < slowTaskFiles {
		return "a fact of the file system beside the dispatch figures, as raw_fsync is of the store's"
	}
	return fmt.Sprintf("over %d µs: the file system makes new files slowly here, which slows every task's launch and so task_dispatch, task_cpu and created_to_started; "+
		"on ext4 without a journal each new inode scans past those freed in the last minutes (a run's scratch directory just removed), "+
		"so run again after about six minutes without removing files, or with --dir on another file system", slowTaskFiles)
}

// cpuSplit is the CPU per task, in ms, of a dispatch round: the
// gateway's process (bare fork/exec's launching goroutines), the pooled
// shims', and the tasks' own processes (true).
type cpuSplit struct{ gateway, shims, tasks float64 }

func (c cpuSplit) total() float64 { return c.gateway + c.shims + c.tasks }

// medianSplit is the median of each part of the rounds' splits.
func medianSplit(rounds []cpuSplit) cpuSplit {
	var g, s, t []float64
	for _, c := range rounds {
		g, s, t = append(g, c.gateway), append(s, c.shims), append(t, c.tasks)
	}
	return cpuSplit{median(g), median(s), median(t)}
}

// taskCPUNote says what the task CPU figure counts, with the median
// split of the gateway's rounds and of bare fork/exec's.
func taskCPUNote(gw, bare cpuSplit) string {
	n := "user and system time of the gateway, its shims and their tasks over the dispatch rounds, the pooled shims counted once the gateway's stop reaped them"
	if !liveCPUTold {
		return n + ", their starts before the round included (this system does not tell a live process's CPU time)"
	}
	return fmt.Sprintf("%s, less what they used before the round: the gateway %.2f ms a task, its shims %.2f, the tasks %.2f; bare fork/exec's launcher %.2f, its tasks %.2f",
		n, gw.gateway, gw.shims, gw.tasks, bare.gateway, bare.tasks)
}

// storeWriterNote says what a store_writer_busy figure of busy means,
// applying being the share of the writer's time spent in the engine's
// functions inside the transactions.
func storeWriterNote(busy, applying float64) string {
	split := fmt.Sprintf("%.0f%% of its time in the engine's work inside the transactions, %.0f%% in bbolt's commit (page writes and two fsyncs)",
		100*applying, 100*(1-applying))
	switch {
	case busy < 0.7:
		return "the store's one writer had time to spare: " + split
	case busy < 0.95:
		// Adding 130% to the writer's CPU at about 0.75 moved dispatch
		// less than this VM's spread (docs/performance.md).
		return "writes wait behind the store's one writer, whose busy time includes its waits for a core and the disk; it bounds task_dispatch only near 1: " + split
	}
	return "the store's one writer bounds task_dispatch here: " + split
}

// runningAtOnce is the average number of tasks running between start and
// end: the sum of their run times over the elapsed time.
func runningAtOnce(tasks []*stored.Task, start, end time.Time) float64 {
	var sum time.Duration
	for _, t := range tasks {
		sum += t.EndedAt.Sub(t.StartedAt)
	}
	return sum.Seconds() / end.Sub(start).Seconds()
}

// startLatency measures, one task at a time on an idle gateway, the time
// from a task's creation to its command's start (as its shim recorded
// it), against the time bare fork/exec takes to start the same program.
func (r *run) startLatency(ctx context.Context) ([]Figure, error) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		return nil, fmt.Errorf("find true: %w", err)
	}
	home := filepath.Join(r.tmp, "latency")
	g, err := r.newGateway(home, r.sz.Concurrency)
	if err != nil {
		return nil, err
	}
	bg := context.WithoutCancel(ctx)
	if err := g.Start(bg); err != nil {
		return nil, err
	}
	defer func() { _ = g.Stop(bg) }()
	c := g.Client()
	var gw, bare []float64
	per := max(r.sz.DispatchTasks/10/r.sz.Rounds, 1)
	for range r.sz.Rounds {
		var g, b []time.Duration
		for range per {
			d, err := oneTask(ctx, c, home, truePath)
			if err != nil {
				return nil, err
			}
			cmd := exec.Command(truePath)
			start := time.Now()
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			b = append(b, time.Since(start))
			if err := cmd.Wait(); err != nil {
				return nil, err
			}
			g = append(g, d)
		}
		gw, bare = append(gw, medianMs(g)), append(bare, medianMs(b))
	}
	return []Figure{{Name: FigStartLatency, Title: "created to child started, one task at a time, p50", Value: median(gw), Unit: "ms", Rounds: gw,
		Baseline: median(bare), BaselineTitle: "bare fork/exec start", BaselineUnit: "ms",
		Target: &Target{Of: "value", Op: "<=", Limit: 2},
		Note:   fmt.Sprintf("%d tasks of true per round on an idle gateway; each round's p50", per)}}, nil
}

// runTrue runs one task of truePath, labelled label, through c and
// returns its record once it ended.
func runTrue(ctx context.Context, c api.Client, label, truePath string) (*stored.Task, error) {
	t, _, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "bench", Label: label, Spec: sdk.TaskSpec{Argv: []string{truePath}}})
	for err == nil && !t.Status.Terminal() {
		changed := c.(api.Changes).Changed()
		if t, err = c.ResolveTask(ctx, t.ID); err != nil || t.Status.Terminal() {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		}
	}
	return t, err
}

// oneTask runs one task of truePath through c, waits for its end, and
// returns the time from its creation to its command's start.
func oneTask(ctx context.Context, c api.Client, home, truePath string) (time.Duration, error) {
	t, err := runTrue(ctx, c, "latency", truePath)
	if err != nil {
		return 0, err
	}
	if t.Status != sdk.TaskSucceeded {
		return 0, fmt.Errorf("task %s ended %s (%v); a task of true must succeed", t.ID, t.Status, t.Errors)
	}
	rec, err := shim.ReadRecord(runner.LogDir(home, t.ID, t.Attempts))
	if err == nil && rec.Child == nil {
		err = errors.New("its shim recorded no child")
	}
	if err != nil {
		return 0, fmt.Errorf("task %s: read its child's start: %w", t.ID, err)
	}
	return rec.Child.StartedAt.Sub(t.CreatedAt), nil
}

// commands measures what a user waits for with no gateway running:
// "flowgate tasks run true" against running true, and the start and
// stop of the gateway such a command hosts (with the first-party
// controllers in process) against the same with them as plugins, as a
// daemon runs them.
func (r *run) commands(ctx context.Context) ([]Figure, error) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		return nil, fmt.Errorf("find true: %w", err)
	}
	home := filepath.Join(r.tmp, "cmd")
	var run, bare, inProcess, plugins []float64
	for range r.sz.Rounds {
		var rs, bs, is, ps []time.Duration
		for range 5 {
			cmd := exec.CommandContext(ctx, r.cfg.Self, "tasks", "run", "true")
			cmd.Env = append(os.Environ(), "FLOWGATE_HOME="+home)
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("%s tasks run true: %v\n%s", r.cfg.Self, err, out)
			}
			rs = append(rs, time.Since(start))
			start = time.Now()
			if err := exec.CommandContext(ctx, truePath).Run(); err != nil {
				return nil, err
			}
			bs = append(bs, time.Since(start))
			for _, v := range []struct {
				into *[]time.Duration
				cfg  gateway.Config
			}{
				{&is, gateway.Config{Controllers: r.cfg.Controllers}},
				{&ps, gateway.Config{Builtins: slices.Collect(maps.Keys(r.cfg.Controllers))}},
			} {
				d, err := r.startStop(ctx, filepath.Join(r.tmp, "ss"), v.cfg)
				if err != nil {
					return nil, err
				}
				*v.into = append(*v.into, d)
			}
		}
		run, bare = append(run, medianMs(rs)), append(bare, medianMs(bs))
		inProcess, plugins = append(inProcess, medianMs(is)), append(plugins, medianMs(ps))
	}
	return []Figure{
		{Name: FigTasksRun, Title: "tasks run true with no gateway running, p50", Value: median(run), Unit: "ms", Rounds: run,
			Baseline: median(bare), BaselineTitle: "running true", BaselineUnit: "ms",
			Target: &Target{Of: "value", Op: "<=", Limit: 60}, Note: "the whole command: it hosts a gateway, runs the task, follows it to its end and stops the gateway"},
		{Name: FigStartStop, Title: "in-process gateway start and stop, p50", Value: median(inProcess), Unit: "ms", Rounds: inProcess,
			Baseline: median(plugins), BaselineTitle: "with its controllers as plugins", BaselineUnit: "ms",
			Target: &Target{Of: "value", Op: "<", Limit: 50}},
	}, nil
}

// startStop times the start and stop of a gateway over home configured as
// cfg (with the run's Self, logger and shims).
func (r *run) startStop(ctx context.Context, home string, cfg gateway.Config) (time.Duration, error) {
	cfg.Home, cfg.Self, cfg.Owner, cfg.Logger = home, r.cfg.Self, "flowgate bench", r.cfg.Logger.Named("bench")
	g, err := gateway.New(cfg)
	if err != nil {
		return 0, err
	}
	bg := context.WithoutCancel(ctx)
	start := time.Now()
	if err := g.Start(bg); err != nil {
		return 0, err
	}
	if err := g.Stop(bg); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
