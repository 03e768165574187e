package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// testShimEnv makes the test binary run as a shim: "<test binary> <dir>"
// with FLOWGATE_TEST_SHIM=1 is "flowgate shim <dir>".
const testShimEnv = "FLOWGATE_TEST_SHIM"

func TestMain(m *testing.M) {
	if os.Getenv(testShimEnv) == "1" {
		os.Exit(shim.Main(os.Args[len(os.Args)-1]))
	}
	// The default launcher runs the executable as "<exe> shim <dir>" or,
	// pooled, "<exe> shim --warm": without this each such shim would run
	// the whole suite again.
	if len(os.Args) == 3 && os.Args[1] == "shim" {
		if os.Args[2] == shim.WarmArg {
			os.Exit(shim.MainWarm())
		}
		os.Exit(shim.Main(os.Args[2]))
	}
	if mode := os.Getenv(testPluginEnv); mode != "" {
		servePlugin(mode) // plugins_test.go
	}
	// As the flowgate binary does for a first-party plugin:
	// `flowgate plugin serve NAME`.
	if len(os.Args) == 4 && os.Args[1] == "plugin" && os.Args[2] == "serve" {
		servePlugin(os.Args[3])
	}
	code := m.Run()
	sharedEtcd.Close()
	os.Exit(code)
}

// The dispatch benchmark's fixed workload.
const (
	dispatchTasks       = 1000 // tasks per round and variant
	dispatchConcurrency = 8    // max_running, submitters, bare workers
	dispatchRounds      = 3    // interleaved rounds of gateway, bare
	idleTasks           = 100  // tasks run one at a time, for latency
	dispatchLimit       = 2 * time.Minute
)

// dispatchArgv is what every task runs: the cheapest real process.
var dispatchArgv = []string{"/bin/true"}

// BenchmarkDispatch measures running tasks through a real gateway (store,
// engine, runner, its pool of shims) against a bare fork/exec loop, in
// interleaved rounds of the same fixed workload: dispatchTasks runs of
// /bin/true at concurrency dispatchConcurrency.
//
//   - gateway: a fresh gateway in a fresh home, max_running 8; 8
//     submitters call RunTask through the in-process client as fast as
//     they can while the runner dispatches. The clock runs from the first
//     RunTask to the moment no task is queued or running. Every task must
//     have succeeded with exit code 0 in its first attempt, per its record
//     and its status.json.
//   - bare: 8 goroutines run exec.Command("/bin/true").Run(), 1000 in all.
//
// It reports the median rate of each variant (gw-tasks/s, bare-tasks/s),
// the median of the per-round ratios (gw/bare; docs/performance.md), and,
// over all gateway rounds, the latency from a task's CreatedAt to its
// child's start (child.json started_at) at p50 and p99 (start-p50-ms,
// start-p99-ms). With 1000 tasks queued at once that latency is mostly
// queueing, so the same latency is also measured for idleTasks tasks run
// one at a time on an idle gateway (idle-start-p50-ms, idle-start-p99-ms).
// To explain the figures it reports the CPU time (user+sys, this process
// and its children: shims and tasks) per task of each variant, and how
// many tasks ran at once on average (gw-avg-running, out of 8); each
// round's log line breaks a task's life into stages: queue (created ->
// StartTask), launch (-> child started), run (-> the shim saw it end) and
// settle (-> task ended).
//
// It also reports the raw fsync rate of the temporary directory's
// filesystem (fsync/s, store.ProbeFsync), where the homes live.
//
// The shims are the real flowgate-shim, built once into a temporary
// directory beside flowgate and pooled as a gateway pools them
// (runner.Shims), so the figures are those of the path a task takes.
// Without go on PATH, or with FLOWGATE_BENCH_SHIM=test, the test binary
// itself serves as the shim (TestMain), one per task.
//
// The workload is fixed and b.N is ignored: run it with -benchtime 1x.
// It takes about 30 s on 2 cores.
func BenchmarkDispatch(b *testing.B) {
	gateway.KeepHeapFloor() // as the flowgate binary does (cli.Run)
	shims, shimName := dispatchShim(b)
	b.Logf("shim: %s; %d tasks x %d rounds, concurrency %d", shimName, dispatchTasks, dispatchRounds, dispatchConcurrency)

	// A machine fact beside the figures: the gateway syncs files and
	// store commits on the temporary directory's filesystem.
	fsync, err := store.ProbeFsync(b.TempDir(), 300*time.Millisecond)
	if err != nil {
		b.Fatal(err)
	}

	var gwRates, bareRates, ratios, gwCPU, bareCPU, running []float64
	var toStart []time.Duration
	b.ResetTimer()
	for round := 1; round <= dispatchRounds; round++ {
		gw := gatewayRound(b, shims)
		bare, bareCPUTime := bareRound(b)
		gwRate := float64(dispatchTasks) / gw.elapsed.Seconds()
		bareRate := float64(dispatchTasks) / bare.Seconds()
		gwRates, bareRates = append(gwRates, gwRate), append(bareRates, bareRate)
		ratios = append(ratios, gwRate/bareRate)
		gwCPU = append(gwCPU, ms(gw.cpu.total())/dispatchTasks)
		bareCPU = append(bareCPU, ms(bareCPUTime.total())/dispatchTasks)
		running = append(running, gw.running)
		toStart = append(toStart, gw.tasks.toStart...)
		b.Logf("round %d: gateway %.0f tasks/s (%s, all submitted after %s, %.1f running on average, %s; stages p50/p99 ms: %s); bare %.0f tasks/s (%s, %s); ratio %.3f",
			round, gwRate, gw.elapsed.Round(time.Millisecond), gw.submitted.Round(time.Millisecond), gw.running, gw.cpu.perTask(), gw.tasks.stages(),
			bareRate, bare.Round(time.Millisecond), bareCPUTime.perTask(), gwRate/bareRate)
	}
	idle := idleLatency(b, shims)
	b.StopTimer()
	b.Logf("one task at a time (%d): created -> child started p50 %.1f ms, p99 %.1f ms; created -> task ended p50 %.1f ms; stages p50/p99 ms: %s",
		idleTasks, ms(percentile(idle.toStart, 50)), ms(percentile(idle.toStart, 99)), ms(percentile(idle.done, 50)), idle.stages())

	b.ReportMetric(median(gwRates), "gw-tasks/s")
	b.ReportMetric(median(bareRates), "bare-tasks/s")
	b.ReportMetric(median(ratios), "gw/bare")
	b.ReportMetric(ms(percentile(toStart, 50)), "start-p50-ms")
	b.ReportMetric(ms(percentile(toStart, 99)), "start-p99-ms")
	b.ReportMetric(ms(percentile(idle.toStart, 50)), "idle-start-p50-ms")
	b.ReportMetric(ms(percentile(idle.toStart, 99)), "idle-start-p99-ms")
	b.ReportMetric(median(running), "gw-avg-running")
	b.ReportMetric(median(gwCPU), "gw-cpu-ms/task")
	b.ReportMetric(median(bareCPU), "bare-cpu-ms/task")
	b.ReportMetric(fsync, "fsync/s")
	b.Logf("gw/bare per round: %s (min %.3f, max %.3f)", fmtFloats(ratios), slices.Min(ratios), slices.Max(ratios))
}

// dispatchShim returns how a gateway starts shims, as it sets them in a
// gateway's config, and its name.
func dispatchShim(b *testing.B) (func(*gateway.Config), string) {
	testShim := func(dir string, env []string) (*os.Process, error) {
		env = append(env, testShimEnv+"=1",
			// Under -race, a process sleeps 1s at exit by default.
			"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
		return shim.Launch(os.Args[0], []string{dir}, env)
	}
	withTestShim := func(c *gateway.Config) { c.Launch = testShim }
	if os.Getenv("FLOWGATE_BENCH_SHIM") == "test" {
		return withTestShim, "the test binary (FLOWGATE_BENCH_SHIM=test)"
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		b.Logf("go is not on PATH, so the flowgate binary cannot be built: using the test binary as the shim instead (figures are not those of a real install)")
		return withTestShim, "the test binary (no go on PATH)"
	}
	dir := b.TempDir()
	start := time.Now()
	out, err := exec.Command(goTool, "build", "-o", dir, "github.com/flowgate/flowgate/cli/flowgate", "github.com/flowgate/flowgate/cli/flowgate-shim").CombinedOutput()
	if err != nil {
		b.Fatalf("build the flowgate binaries: %v\n%s", err, out)
	}
	b.Logf("built flowgate and flowgate-shim in %s", time.Since(start).Round(time.Millisecond))
	// Each gateway gets Shims of its own, as each gateway process has.
	exe := filepath.Join(dir, "flowgate")
	return func(c *gateway.Config) { c.Shims = runner.NewShims(exe, nil) }, "flowgate-shim (built from ./cli/flowgate-shim, next to ./cli/flowgate), pooled"
}

// gatewayResult is one gateway round.
type gatewayResult struct {
	elapsed   time.Duration // first RunTask to all terminal
	submitted time.Duration // first RunTask to the last one's return
	cpu       cpuUse        // user+sys of this process and its reaped children
	running   float64       // tasks running on average (sum of run times / elapsed)
	tasks     taskTimes
}

// startGateway starts a gateway with max_running dispatchConcurrency in a
// fresh home, and returns its in-process client, the home, and a function
// that stops it.
func startGateway(b *testing.B, shims func(*gateway.Config)) (api.Client, string, func()) {
	ctx := context.Background()
	home := b.TempDir()
	var fc gateway.FileConfig
	fc.Limits.MaxRunning = dispatchConcurrency
	cfg := gateway.Config{Home: home, File: fc}
	shims(&cfg)
	g, err := gateway.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		b.Fatal(err)
	}
	stop := func() {
		if err := g.Stop(ctx); err != nil {
			b.Errorf("stop gateway: %v", err)
		}
	}
	c := g.Client()
	if st, err := c.Status(ctx); err != nil || st.MaxRunning != dispatchConcurrency {
		stop()
		b.Fatalf("gateway status: max_running %d, error %v; want %d", st.MaxRunning, err, dispatchConcurrency)
	}
	return c, home, stop
}

func runTask(ctx context.Context, c api.Client) (*stored.Task, error) {
	t, created, err := c.RunTask(ctx, apitype.CreateTaskInput{OwnerKey: "bench", Spec: sdk.TaskSpec{Argv: dispatchArgv}})
	if err == nil && !created {
		err = errors.New("RunTask returned an existing task")
	}
	return t, err
}

// gatewayRound runs dispatchTasks tasks through a fresh gateway in a fresh
// home, checks that each one succeeded in one attempt, and returns the
// timings.
func gatewayRound(b *testing.B, shims func(*gateway.Config)) gatewayResult {
	ctx := context.Background()
	c, home, stop := startGateway(b, shims)
	defer stop()

	var res gatewayResult
	cpu0 := cpuTime()
	start := time.Now()
	err := spread(func() error {
		_, err := runTask(ctx, c)
		return err
	})
	res.submitted = time.Since(start)
	if err != nil {
		b.Fatalf("RunTask: %v", err)
	}
	if err := waitAllTerminal(ctx, c, start); err != nil {
		b.Fatal(err)
	}
	res.elapsed = time.Since(start)
	res.cpu = cpuTime().sub(cpu0)

	res.tasks = checkTasks(b, c, home, dispatchTasks)
	res.running = res.tasks.busy.Seconds() / res.elapsed.Seconds()
	return res
}

// idleLatency runs idleTasks tasks through a fresh gateway one at a time,
// each created once the previous one ended: the latency of dispatch
// itself, without a queue.
func idleLatency(b *testing.B, shims func(*gateway.Config)) taskTimes {
	ctx := context.Background()
	c, home, stop := startGateway(b, shims)
	defer stop()
	for range idleTasks {
		t, err := runTask(ctx, c)
		if err != nil {
			b.Fatalf("RunTask: %v", err)
		}
		for deadline := time.Now().Add(dispatchLimit); ; time.Sleep(time.Millisecond) {
			if t, err = c.ResolveTask(ctx, t.ID); err != nil {
				b.Fatal(err)
			}
			if t.Status.Terminal() {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("task %s still %s after %s", t.ID, t.Status, dispatchLimit)
			}
		}
	}
	return checkTasks(b, c, home, idleTasks)
}

// waitAllTerminal returns once no task is queued or running. It polls two
// one-item index reads, which cost next to nothing, and confirms with a
// full count.
func waitAllTerminal(ctx context.Context, c api.Client, start time.Time) error {
	active := func(s sdk.TaskStatus) (bool, error) {
		p, err := c.ListTasks(ctx, apitype.TaskFilter{Status: s, Limit: 1})
		return len(p.Tasks) > 0, err
	}
	for {
		// Queued first: a task moves queued -> running -> terminal, so a
		// task missed by the first read is seen by the second.
		q, err := active(sdk.TaskQueued)
		if err != nil {
			return err
		}
		r, err := active(sdk.TaskRunning)
		if err != nil {
			return err
		}
		if !q && !r {
			st, err := c.Status(ctx)
			if err != nil {
				return err
			}
			done := 0
			for s, n := range st.Tasks {
				if s.Terminal() {
					done += n
				}
			}
			if done == dispatchTasks {
				return nil
			}
		}
		if time.Since(start) > dispatchLimit {
			st, _ := c.Status(ctx)
			return fmt.Errorf("tasks not all terminal after %s: %v", dispatchLimit, st.Tasks)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// taskTimes are the timings of a set of tasks, one sample per task.
type taskTimes struct {
	toStart []time.Duration // CreatedAt -> child started (child.json)
	done    []time.Duration // CreatedAt -> task EndedAt
	// The stages of a task's life: queue (CreatedAt -> StartTask),
	// launch (-> child started), run (-> the shim saw it end), settle
	// (-> task EndedAt).
	queue, launch, run, settle []time.Duration
	busy                       time.Duration // sum of StartedAt -> EndedAt
}

// stages formats the p50/p99 of each stage in ms.
func (tt taskTimes) stages() string {
	var sb strings.Builder
	for _, s := range []struct {
		name string
		d    []time.Duration
	}{{"queue", tt.queue}, {"launch", tt.launch}, {"run", tt.run}, {"settle", tt.settle}} {
		fmt.Fprintf(&sb, "%s %.1f/%.1f  ", s.name, ms(percentile(s.d, 50)), ms(percentile(s.d, 99)))
	}
	return strings.TrimSpace(sb.String())
}

// checkTasks fails the benchmark unless the home holds exactly want tasks
// and every one succeeded with exit code 0 in exactly one attempt, and
// returns their timings, read from the task records and the attempt
// files.
func checkTasks(b *testing.B, c api.Client, home string, want int) taskTimes {
	page, err := c.ListTasks(context.Background(), apitype.TaskFilter{OwnerKey: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	if len(page.Tasks) != want {
		b.Fatalf("%d tasks stored, want %d", len(page.Tasks), want)
	}
	var tt taskTimes
	for _, t := range page.Tasks {
		if t.Status != sdk.TaskSucceeded || t.ExitCode == nil || *t.ExitCode != 0 || t.Attempts != 1 {
			code := "none"
			if t.ExitCode != nil {
				code = fmt.Sprint(*t.ExitCode)
			}
			b.Fatalf("task %s: status %s, exit code %s, attempts %d, errors %q; want succeeded, 0, 1",
				t.ID, t.Status, code, t.Attempts, t.Errors)
		}
		dir := runner.LogDir(home, t.ID, 1)
		rec, err := shim.ReadRecord(dir)
		if err != nil {
			b.Fatalf("task %s: %v", t.ID, err)
		}
		child, st := rec.Child, rec.Status
		if child == nil || st == nil {
			b.Fatalf("task %s: the attempt record holds child %v, status %v; want both", t.ID, child, st)
		}
		if st.ExitCode != 0 || st.Reason != "" {
			b.Fatalf("task %s: the attempt record says exit code %d, reason %q", t.ID, st.ExitCode, st.Reason)
		}
		tt.toStart = append(tt.toStart, child.StartedAt.Sub(t.CreatedAt))
		tt.done = append(tt.done, t.EndedAt.Sub(t.CreatedAt))
		tt.queue = append(tt.queue, t.StartedAt.Sub(t.CreatedAt))
		tt.launch = append(tt.launch, child.StartedAt.Sub(t.StartedAt))
		tt.run = append(tt.run, st.EndedAt.Sub(child.StartedAt))
		tt.settle = append(tt.settle, t.EndedAt.Sub(st.EndedAt))
		tt.busy += t.EndedAt.Sub(t.StartedAt)
	}
	return tt
}

// bareRound runs /bin/true dispatchTasks times from dispatchConcurrency
// goroutines and returns the wall time and the CPU time spent.
func bareRound(b *testing.B) (time.Duration, cpuUse) {
	cpu0 := cpuTime()
	start := time.Now()
	err := spread(func() error { return exec.Command(dispatchArgv[0], dispatchArgv[1:]...).Run() })
	elapsed := time.Since(start)
	cpu := cpuTime().sub(cpu0)
	if err != nil {
		b.Fatalf("bare run: %v", err)
	}
	return elapsed, cpu
}

// spread calls do dispatchTasks times in all from dispatchConcurrency
// goroutines, each stopping at its first error, and returns one of the
// errors, or nil.
func spread(do func() error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, dispatchConcurrency)
	for range dispatchConcurrency {
		wg.Go(func() {
			for next.Add(1) <= dispatchTasks {
				if err := do(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// cpuTime is the user and system time of this process and of its children
// that have been waited for (shims, and through them the tasks).
func cpuTime() cpuUse {
	get := func(who int) time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return cpuUse{self: get(syscall.RUSAGE_SELF), children: get(syscall.RUSAGE_CHILDREN)}
}

// cpuUse is CPU time spent in this process and in its children.
type cpuUse struct{ self, children time.Duration }

func (u cpuUse) sub(v cpuUse) cpuUse { return cpuUse{u.self - v.self, u.children - v.children} }

func (u cpuUse) total() time.Duration { return u.self + u.children }

// perTask formats u per task in ms: total (this process + children).
func (u cpuUse) perTask() string {
	return fmt.Sprintf("%.2f ms CPU/task = %.2f here + %.2f in child processes",
		ms(u.total())/dispatchTasks, ms(u.self)/dispatchTasks, ms(u.children)/dispatchTasks)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// percentile returns the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func fmtFloats(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.3f", x)
	}
	return strings.Join(parts, " ")
}
