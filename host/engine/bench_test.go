package engine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// BenchmarkGuardedFlowUpdate measures read-check-write flow updates with
// the expected revision, through the engine on a real bbolt file, with 1
// writer and with 64 writers on disjoint flows. Each figure is reported
// beside a raw fsync probe of the same file system taken in the same run, as
// x-fsync: the targets (docs/performance.md) are ≥0.3 for 1 writer and ≥3
// for 64 writers.
func BenchmarkGuardedFlowUpdate(b *testing.B) {
	for _, writers := range []int{1, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			eng := newEngine(b)
			state := json.RawMessage(`{"step":"render","attempt":1,"notes":"a value of about three hundred bytes once encoded with its envelope"}`)
			ids := make([]string, writers)
			revs := make([]int64, writers)
			for i := range ids {
				f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "bench", ControllerID: "bench", Goal: "benchmark flow", State: state})
				if err != nil {
					b.Fatal(err)
				}
				ids[i], revs[i] = f.ID, f.Revision
			}
			fsync, err := store.ProbeFsync(b.TempDir(), 300*time.Millisecond)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				n := b.N / writers
				if w < b.N%writers {
					n++
				}
				wg.Go(func() {
					for range n {
						f, err := eng.UpdateFlow(ids[w], revs[w], engine.FlowPatch{State: state})
						if err != nil {
							errs <- err
							return
						}
						revs[w] = f.Revision
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			// The guard must hold while it is measured: a stale write fails.
			if _, err := eng.UpdateFlow(ids[0], revs[0]-1, engine.FlowPatch{State: state}); !errors.Is(err, sdk.ErrRevisionConflict) {
				b.Fatalf("a stale expected revision was not refused (err %v)", err)
			}
			ops := float64(b.N) / elapsed.Seconds()
			b.ReportMetric(ops, "updates/s")
			b.ReportMetric(fsync, "fsync/s")
			b.ReportMetric(ops/fsync, "x-fsync")
		})
	}
}

// BenchmarkTaskLifecycle measures what the engine does inside the store's
// transactions for one detached task: its creation (with its one-task
// flow), its start and its end, one write each, on a real bbolt file.
// apply-µs/task is the time spent in the engine's functions inside those
// transactions (store.WriterStats.Applying), the part of the store
// writer's time that the engine, not the disk, decides; dispatch waits
// on that writer (docs/performance.md). Its allocs/op, unlike its times,
// hold still on a shared machine.
func BenchmarkTaskLifecycle(b *testing.B) {
	bboltOnly(b)
	st, err := store.Open(filepath.Join(b.TempDir(), "flowgate.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	eng, err := engine.New(st, engine.Config{})
	if err != nil {
		b.Fatal(err)
	}
	code := 0
	before := st.Writer()
	b.ReportAllocs()
	for b.Loop() {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "bench", Label: "step", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
		if err == nil {
			_, err = eng.StartTask(task.ID, engine.StartInput{})
		}
		if err == nil {
			_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 1, ExitCode: &code})
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	after := st.Writer()
	b.ReportMetric(float64((after.Applying-before.Applying).Microseconds())/float64(b.N), "apply-µs/task")
	b.ReportMetric(float64((after.Busy-before.Busy).Microseconds())/float64(b.N), "busy-µs/task")
}
