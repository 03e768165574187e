package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
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

// sleeperSeconds is how long the restart's sleepers would run: far
// longer than starting them takes, which on a loaded 2-core VM passed ten
// minutes for 1,000 of them. They are cancelled at the end.
const sleeperSeconds = 7200

// restart measures the gateway's restart over the big home, with
// Sizes.RunningTasks tasks of sleep 7200 left running by the previous
// gateway, against a start over an empty home, in interleaved rounds: the
// time Start takes (the store opened, the running tasks reattached, the
// socket serving), and the resident set of this process once it returns,
// after the Go runtime has given back what it can. The gateways run in
// this process, which holds little else by then.
//
// The sleepers are cancelled through the gateway's client at the end, and
// their end awaited, also when ctx is cancelled or a step fails.
func (r *run) restart(ctx context.Context) (_ []Figure, err error) {
	home := filepath.Join(r.tmp, bigHome)
	empty := mkdir(filepath.Join(r.tmp, emptyHome))
	n := r.sz.RunningTasks
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		return nil, fmt.Errorf("find sleep: %w", err)
	}
	bg := context.WithoutCancel(ctx)
	live, err := r.newGateway(home, n) // the gateway over home, while one runs
	if err != nil {
		return nil, err
	}
	if err := live.Start(bg); err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, r.stopSleepers(bg, home, n, live)) }()
	if err := submit(ctx, live.Client(), n, r.sz.Concurrency, "sleeper", []string{sleep, strconv.Itoa(sleeperSeconds)}); err != nil {
		return nil, err
	}
	if err := r.waitRunning(ctx, live.Client(), home, n); err != nil {
		return nil, err
	}
	r.progress("      all %d sleepers run", n)
	if err := live.Stop(bg); err != nil {
		return nil, err
	}
	live = nil

	// start starts a gateway over h and returns it, how long Start took,
	// the CPU this process spent meanwhile, in ms, and the resident set
	// after it, in MiB.
	start := func(h string) (*gateway.Gateway, float64, float64, float64, error) {
		runtime.GC()
		debug.FreeOSMemory()
		g, err := r.newGateway(h, n)
		if err != nil {
			return nil, 0, 0, 0, err
		}
		t0, cpu0 := time.Now(), cpuTime()
		if err := g.Start(bg); err != nil {
			return nil, 0, 0, 0, err
		}
		d, cpu := time.Since(t0), cpuTime()-cpu0
		runtime.GC()
		debug.FreeOSMemory()
		rss, err := residentMiB()
		if err != nil {
			_ = g.Stop(bg)
			return nil, 0, 0, 0, err
		}
		return g, ms(d), ms(cpu), rss, nil
	}
	var startEmpty, startBig, cpuBig, rssEmpty, rssBig []float64
	for round := range r.sz.Rounds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		g, d, _, rss, err := start(empty)
		if err != nil {
			return nil, err
		}
		if err := g.Stop(bg); err != nil {
			return nil, err
		}
		startEmpty, rssEmpty = append(startEmpty, d), append(rssEmpty, rss)
		var cpu float64
		if live, d, cpu, rss, err = start(home); err != nil {
			return nil, err
		}
		startBig, cpuBig, rssBig = append(startBig, d), append(cpuBig, cpu), append(rssBig, rss)
		s, err := live.Client().Status(ctx)
		if err != nil {
			return nil, err
		}
		if s.Tasks[sdk.TaskRunning] != n {
			return nil, fmt.Errorf("after the restart %d tasks are running; want the %d sleepers", s.Tasks[sdk.TaskRunning], n)
		}
		if round < r.sz.Rounds-1 {
			if err := live.Stop(bg); err != nil {
				return nil, err
			}
			live = nil
		}
	}
	what := fmt.Sprintf("%s flows, %s running tasks", thousands(int64(r.sz.Flows)), thousands(int64(n)))
	return []Figure{
		{Name: FigRestart, Title: "gateway restart (Start) with " + what, Value: median(startBig), Unit: "ms", Rounds: startBig,
			Baseline: median(startEmpty), BaselineTitle: "start over an empty home", BaselineUnit: "ms",
			Target: &Target{Of: "value", Op: "<", Limit: 1000},
			Note: fmt.Sprintf("the CPU this process spent in the start: %s ms, the median of %s to %s; on a loaded machine the start also waits for the CPU",
				Format(median(cpuBig)), Format(slices.Min(cpuBig)), Format(slices.Max(cpuBig)))},
		{Name: FigRSS, Title: "resident set after the restart with " + what, Value: median(rssBig), Unit: "MiB", Rounds: rssBig,
			Baseline: median(rssEmpty), BaselineTitle: "after a start over an empty home", BaselineUnit: "MiB",
			Note: fmt.Sprintf("this process, which runs the gateway; the gateway over the records adds %s MiB", Format(median(rssBig)-median(rssEmpty)))},
	}, nil
}

// waitRunning waits until the n sleepers of home run: n tasks running,
// each with its child started (its attempt's child.json written). A task
// is running from the moment the runner records its attempt, before its
// shim starts; a gateway stopped then withdraws the attempt and queues the
// task again at the next start. It writes a progress line every 10
// seconds.
func (r *run) waitRunning(ctx context.Context, c api.Client, home string, n int) error {
	start := time.Now()
	deadline := start.Add(time.Minute + time.Duration(n)*100*time.Millisecond)
	last := start
	for {
		s, err := c.Status(ctx)
		if err != nil {
			return err
		}
		running := s.Tasks[sdk.TaskRunning]
		if running >= n {
			page, err := c.ListTasks(ctx, apitype.TaskFilter{Status: sdk.TaskRunning})
			if err != nil {
				return err
			}
			started := 0
			for _, t := range page.Tasks {
				if rec, err := shim.ReadRecord(runner.LogDir(home, t.ID, t.Attempts)); err == nil && rec.Child != nil {
					started++
				}
			}
			if started >= n {
				return nil
			}
		}
		for _, st := range []sdk.TaskStatus{sdk.TaskSucceeded, sdk.TaskFailed, sdk.TaskTimedOut, sdk.TaskCancelled, sdk.TaskLost} {
			if s.Tasks[st] > 0 {
				return fmt.Errorf("%d sleepers ended %s; they should run for %d seconds", s.Tasks[st], st, sleeperSeconds)
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d sleepers running after %s", running, n, time.Since(start).Round(time.Second))
		}
		if time.Since(last) >= 10*time.Second {
			r.progress("      %d of %d sleepers running", running, n)
			last = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stopSleepers ends every task of home that is still queued or running:
// cancelled through the client of g (or of a gateway started for it when
// g is nil), then awaited. A task that has not ended after a minute has
// its shim and process killed, and the error says so. g is stopped.
func (r *run) stopSleepers(ctx context.Context, home string, maxRunning int, g *gateway.Gateway) error {
	if g == nil {
		var err error
		if g, err = r.newGateway(home, maxRunning); err != nil {
			return err
		}
		if err := g.Start(ctx); err != nil {
			return fmt.Errorf("start a gateway to stop the sleepers: %w", err)
		}
	}
	c := g.Client()
	active := func() ([]*stored.Task, error) {
		var out []*stored.Task
		for _, st := range []sdk.TaskStatus{sdk.TaskQueued, sdk.TaskRunning} {
			page, err := c.ListTasks(ctx, apitype.TaskFilter{Status: st})
			if err != nil {
				return nil, err
			}
			out = append(out, page.Tasks...)
		}
		return out, nil
	}
	ts, err := active()
	if len(ts) > 0 {
		r.progress("      cancelling %d sleepers", len(ts))
	}
	for _, t := range ts {
		if _, cerr := c.CancelTask(ctx, t.ID); cerr != nil && !errors.Is(cerr, sdk.ErrTerminal) {
			err = cmp.Or(err, cerr)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	werr := waitTasks(wctx, c, 0, 100*time.Millisecond)
	cancel()
	if werr != nil {
		left, lerr := active()
		for _, t := range left {
			for _, pid := range []int{t.ShimPID, t.PID} {
				if pid > 1 {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		err = errors.Join(err, lerr, fmt.Errorf("%d sleepers had not ended a minute after their cancel; their shims and processes were killed", len(left)))
	}
	return errors.Join(err, g.Stop(ctx))
}

// residentMiB is the resident set of this process in MiB, from
// /proc/self/statm.
func residentMiB() (float64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, fmt.Errorf("read the resident set: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("read the resident set: /proc/self/statm has %d fields", len(f))
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read the resident set: %w", err)
	}
	return float64(pages*int64(os.Getpagesize())) / (1 << 20), nil
}
