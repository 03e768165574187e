package gateway_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/api"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/gateway"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
	"github.com/flowgate/flowgate/host/store"
)

// The idle cron benchmark's fixed workload.
const (
	idleCronJobs   = 10_000          // enabled jobs, the canary included
	idleWindow     = 5 * time.Second // CPU is measured over this much idle time
	idleCronLimit  = time.Minute     // bound on waiting for the first tick
	idleCanaryName = "canary"
)

// idleCronJob is the i-th job of the mix: half weekday mornings in New
// York ("M 7 * * 1-5", M spread over the hour), a quarter every 15
// minutes in UTC, and a quarter intervals of 1h to 24h.
func idleCronJob(i int) scheduler.JobInput {
	in := scheduler.JobInput{Name: fmt.Sprintf("job-%05d", i), Command: "true"}
	switch i % 4 {
	case 0, 1:
		in.Schedule = schedule.Flags{Cron: fmt.Sprintf("%d 7 * * 1-5", i%60), TZ: "America/New_York"}
	case 2:
		in.Schedule = schedule.Flags{Cron: "*/15 * * * *"}
	default:
		in.Schedule = schedule.Flags{Every: fmt.Sprintf("%dh", 1+i%24)}
	}
	return in
}

// BenchmarkGatewayIdle10kCronJobs measures what 10,000 enabled cron jobs
// cost a gateway that has nothing to do: CPU while idle, memory, and the
// time Start takes (it rebuilds the scheduler's indexes).
//
//  1. A gateway on an empty home: Start is timed, then after a second
//     memory is read and process CPU (user+sys, RUSAGE_SELF) is measured
//     over idleWindow.
//  2. The gateway is stopped and 10,000 enabled jobs are added straight
//     into its store: 9,999 of the mix (idleCronJob) and a canary, an
//     hourly job whose first run was half an hour ago.
//  3. The gateway is started again (timed). Its first tick must fire the
//     canary's missed run once, which shows the tick happened; once that
//     run has ended no job is due for the next ~15 minutes. Memory and
//     idle CPU are then measured as in 1.
//
// Memory is read after debug.FreeOSMemory: the Go heap in use
// (HeapInuse+StackInuse) and the resident set (/proc/self/statm, which
// counts the store's mapped pages). Both include the test binary's own,
// so only the differences mean something.
//
// It reports idle-cpu-%-of-core (CPU seconds / wall seconds × 100) for
// 0 and 10k jobs, added-heap-MiB and added-rss-MiB, and start-ms for
// both starts. The workload is fixed and b.N is ignored: run it with
// -benchtime 1x. It takes about 20 s.
func BenchmarkGatewayIdle10kCronJobs(b *testing.B) {
	dir, err := os.MkdirTemp("", "fg") // short: the API socket lives here
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })

	g, start0 := startIdleGateway(b, dir)
	time.Sleep(time.Second) // the first tick, on no jobs
	mem0 := readMem()
	cpu0 := idleCPU()
	stopIdleGateway(b, g)

	addStart := time.Now()
	addIdleCronJobs(b, dir)
	b.Logf("added %d jobs in %s", idleCronJobs, time.Since(addStart).Round(time.Millisecond))

	g, start10k := startIdleGateway(b, dir)
	tick := waitCanary(b, g.Client())
	b.Logf("the canary's run ended %s after Start returned", tick.Round(time.Millisecond))
	mem10k := readMem()
	cpu10k := idleCPU()
	st, err := g.Client().CronStatus(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	stopIdleGateway(b, g)
	checkIdleJobs(b, st)

	b.Logf("0 jobs:   start %s, idle CPU %.3f%% of a core, heap %.1f MiB, RSS %.1f MiB", start0.Round(time.Millisecond), cpu0, mem0.heap, mem0.rss)
	b.Logf("10k jobs: start %s, idle CPU %.3f%% of a core, heap %.1f MiB, RSS %.1f MiB", start10k.Round(time.Millisecond), cpu10k, mem10k.heap, mem10k.rss)
	b.ReportMetric(cpu0, "idle-cpu-%-of-core-0jobs")
	b.ReportMetric(cpu10k, "idle-cpu-%-of-core-10k")
	b.ReportMetric(mem10k.heap-mem0.heap, "added-heap-MiB")
	b.ReportMetric(mem10k.rss-mem0.rss, "added-rss-MiB")
	b.ReportMetric(ms(start0), "start-ms-0jobs")
	b.ReportMetric(ms(start10k), "start-ms-10k")
}

// startIdleGateway starts a gateway on dir with the test binary as its
// shim, and returns it and how long Start took.
func startIdleGateway(b *testing.B, dir string) (*gateway.Gateway, time.Duration) {
	g, err := gateway.New(gateway.Config{
		Home: dir, Launch: testLaunch,
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr}),
	})
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := g.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	return g, time.Since(start)
}

func stopIdleGateway(b *testing.B, g *gateway.Gateway) {
	if err := g.Stop(context.Background()); err != nil {
		b.Fatalf("stop gateway: %v", err)
	}
}

// addIdleCronJobs adds idleCronJobs enabled jobs to the store of dir,
// which no gateway holds: 9,999 of the mix, from 32 goroutines so that
// commits are shared, and the canary, added as of 90 minutes ago so that
// its first hourly run is due at once.
func addIdleCronJobs(b *testing.B, dir string) {
	st, err := store.Open(filepath.Join(dir, home.DBFile), store.Options{Owner: b.Name()})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		b.Fatal(err)
	}
	jobs := scheduler.NewJobs(eng, scheduler.JobsConfig{})
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		errs = make(chan error, 32)
	)
	for range 32 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < idleCronJobs-1; i = int(next.Add(1)) - 1 {
				if _, err := jobs.Add(idleCronJob(i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatalf("add job: %v", err)
	}
	past := scheduler.NewJobs(eng, scheduler.JobsConfig{Now: func() time.Time { return time.Now().Add(-90 * time.Minute) }})
	if _, err := past.Add(scheduler.JobInput{Name: idleCanaryName, Schedule: schedule.Flags{Every: "1h"}, Command: "true"}); err != nil {
		b.Fatal(err)
	}
}

// waitCanary waits until the canary's missed run, fired by the first
// tick, has ended, and returns how long that took.
func waitCanary(b *testing.B, c api.Client) time.Duration {
	start := time.Now()
	for {
		runs, err := c.JobRuns(context.Background(), idleCanaryName, 0)
		if err != nil {
			b.Fatal(err)
		}
		if len(runs) > 1 {
			b.Fatalf("the canary ran %d times, want once", len(runs))
		}
		if len(runs) == 1 && runs[0].Status == scheduler.RunOK {
			return time.Since(start)
		}
		if len(runs) == 1 && runs[0].Status != scheduler.RunStarting && runs[0].Status != scheduler.RunRunning {
			b.Fatalf("the canary's run ended %s (%s), want %s", runs[0].Status, runs[0].Error, scheduler.RunOK)
		}
		if time.Since(start) > idleCronLimit {
			b.Fatalf("the canary has not run %s after Start: no tick?", idleCronLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkIdleJobs fails the benchmark unless st holds idleCronJobs enabled
// jobs of which only the canary has run, each with a next run in the
// future.
func checkIdleJobs(b *testing.B, st api.CronStatus) {
	if len(st.Jobs) != idleCronJobs {
		b.Fatalf("%d jobs, want %d", len(st.Jobs), idleCronJobs)
	}
	now := time.Now()
	for _, j := range st.Jobs {
		switch {
		case !j.Job.Enabled || !j.Job.State.NextRun.After(now):
			b.Fatalf("job %s: enabled %t, next run %s; want enabled, after %s", j.Job.Name, j.Job.Enabled, j.Job.State.NextRun, now)
		case j.Job.Name != idleCanaryName && !j.LastScheduled.IsZero():
			b.Fatalf("job %s ran at %s while idle", j.Job.Name, j.LastScheduled)
		}
	}
}

// idleCPU returns this process's CPU time (user+sys) over idleWindow, as
// a percentage of one core.
func idleCPU() float64 {
	cpu, start := selfCPU(), time.Now()
	time.Sleep(idleWindow)
	return 100 * (selfCPU() - cpu).Seconds() / time.Since(start).Seconds()
}

// memUse is a process's memory in MiB: the Go heap and stacks in use,
// and the resident set.
type memUse struct{ heap, rss float64 }

// readMem returns memUse after a GC that also returns freed memory to
// the OS, so that the resident set holds what is live (and mapped).
func readMem() memUse {
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	u := memUse{heap: float64(ms.HeapInuse+ms.StackInuse) / (1 << 20)}
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			pages, _ := strconv.ParseInt(f[1], 10, 64)
			u.rss = float64(pages*int64(os.Getpagesize())) / (1 << 20)
		}
	}
	return u
}
