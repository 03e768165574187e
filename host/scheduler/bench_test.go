package scheduler_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/scheduler"
)

// benchJobs is the number of enabled jobs the benchmarks load.
const benchJobs = 10_000

// benchJob is the i-th job of the benchmarks' mix: half weekday
// mornings in New York ("M 7 * * 1-5", M spread over the hour), a
// quarter every 15 minutes in UTC, and a quarter intervals of 1h to 24h.
func benchJob(i int) scheduler.JobInput {
	in := scheduler.JobInput{Name: fmt.Sprintf("job-%05d", i), Command: fmt.Sprintf("echo %d", i)}
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

// benchScheduler returns a Scheduler on a real store in a temporary
// directory, with benchJobs enabled jobs added at t0 (10:00:30 UTC, a
// Monday), and the clock it reads. The first job is due at 10:15.
func benchScheduler(b *testing.B) (*scheduler.Scheduler, *jobClock) {
	b.Helper()
	e := newLoopEnv(b, scheduler.Config{})
	s, c := e.sched, e.clock

	// Concurrent adds share commits (the store's group commit): 10,000
	// one-by-one commits would take most of a minute on a slow disk.
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		errs = make(chan error, 32)
	)
	for range 32 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < benchJobs; i = int(next.Add(1)) - 1 {
				if _, err := s.Jobs().Add(benchJob(i)); err != nil {
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
	jobs, err := s.Jobs().List(false)
	if err != nil {
		b.Fatal(err)
	}
	if len(jobs) != benchJobs {
		b.Fatalf("%d enabled jobs, want %d", len(jobs), benchJobs)
	}
	if first := jobs[0].State.NextRun; !first.After(idleAt) {
		b.Fatalf("first job due at %s, want after %s", first, idleAt)
	}
	return s, c
}

// idleAt is a time at which none of benchScheduler's jobs is due.
var idleAt = t0.Add(10 * time.Minute)

// BenchmarkIdleTick10k measures one scheduler pass over 10,000 enabled
// jobs none of which is due, at a fixed clock:
//
//   - index: TickOnce, which reads the index of jobs with open runs and
//     the due index up to now, both empty here.
//   - full-scan: what a pass cost before the due index: decode every job
//     (Jobs.List) to find the due ones.
//
// Compare the two from one run (docs/performance.md). After the index
// ticks, nothing may have fired.
func BenchmarkIdleTick10k(b *testing.B) {
	s, c := benchScheduler(b)
	c.set(idleAt)
	ctx := context.Background()
	b.Run("index", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.TickOnce(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		st, err := s.Status()
		if err != nil {
			b.Fatal(err)
		}
		for _, j := range st {
			if !j.LastScheduled.IsZero() || j.Active > 0 {
				b.Fatalf("job %s fired at an idle tick (last scheduled %s)", j.Job.Name, j.LastScheduled)
			}
		}
	})
	b.Run("full-scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			jobs, err := s.Jobs().List(false)
			if err != nil {
				b.Fatal(err)
			}
			if len(jobs) != benchJobs {
				b.Fatalf("%d jobs listed, want %d", len(jobs), benchJobs)
			}
		}
	})
}

// BenchmarkNextDueSet10k measures computing the next due set of 10,000
// enabled jobs:
//
//   - schedule-next: Schedule.Next for every job, as Add and Edit do for
//     one job (each call parses its cron expression and finds its zone in
//     the cache the Scheduler keeps).
//   - reindex: Scheduler.Reindex, which Start runs: one transaction that
//     drops both indexes and rebuilds them from every job and runtime
//     record, and commits.
//
// Each reports ns/job beside ns/op.
func BenchmarkNextDueSet10k(b *testing.B) {
	s, _ := benchScheduler(b)
	jobs, err := s.Jobs().List(false)
	if err != nil {
		b.Fatal(err)
	}
	scheds := make([]schedule.Schedule, len(jobs))
	zones := new(schedule.Zones) // as the Scheduler shares one
	for i, j := range jobs {
		scheds[i] = j.Schedule.Schedule()
		scheds[i].Zones = zones
	}
	perJob := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchJobs, "ns/job")
	}
	b.Run("schedule-next", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i, sc := range scheds {
				if n := sc.Next(idleAt); !n.After(idleAt) {
					b.Fatalf("job %s: next %s, want after %s", jobs[i].Name, n, idleAt)
				}
			}
		}
		perJob(b)
	})
	b.Run("reindex", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.Reindex(); err != nil {
				b.Fatal(err)
			}
		}
		perJob(b)
	})
}
