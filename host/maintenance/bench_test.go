package maintenance_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/maintenance"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// BenchmarkMaintenancePreview measures one preview pass over n finished
// detached tasks (each with its mirrored flow), none due for anything, at
// 10,000 and 100,000. A full pass must take time linear in the records,
// so its per-flow figure should stay flat as n grows; a quick pass (the
// gateway's sweep) reads only live and expiring work, none here, so its
// time should not grow with n at all.
func BenchmarkMaintenancePreview(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("flows=%d", n), func(b *testing.B) {
			st, err := store.Open(filepath.Join(b.TempDir(), "flowgate.db"), store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			eng, err := engine.New(st, engine.Config{})
			if err != nil {
				b.Fatal(err)
			}
			fill(b, eng, n)
			for _, quick := range []bool{false, true} {
				name := "full"
				if quick {
					name = "quick"
				}
				b.Run(name, func(b *testing.B) {
					cfg := maintenance.Config{Home: b.TempDir(), Quick: quick}
					b.ReportAllocs()
					b.ResetTimer()
					start := time.Now()
					for range b.N {
						s, err := maintenance.Run(context.Background(), eng, cfg)
						if err != nil || s.TaskFlows.Pruned+s.Tasks.CleanupStamped+s.Indexes != 0 {
							b.Fatalf("pass: %+v, %v", s, err)
						}
					}
					b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*n), "ns/flow")
				})
			}
		})
	}
}

// fill creates n finished detached tasks from 64 writers, so commits are
// shared.
func fill(b *testing.B, eng *engine.Engine, n int) {
	b.Helper()
	const writers = 64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := w; i < n; i += writers {
				t, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "bench", Runtime: "cli"})
				if err == nil {
					_, err = eng.FinishTask(t.ID, engine.FinishInput{Status: sdk.TaskCancelled})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
