package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/shell"
)

// BenchmarkShimReuse compares the two ways issue 30 gave to take a
// process start off a step, on the real flowgate-shim: a pool of idle
// shims, each taking the next attempt once its last one's end is
// recorded (the runner's design), and one shim per flow running the
// flow's steps one after another (a prototype: one warm shim handed each
// step in turn), beside a fresh shim per step. It reports the wall time
// per step of a 20-step chain and per item of an 8-item fan-out run at
// once; a flow's shim runs one attempt at a time, so it runs the items
// one after another.
func BenchmarkShimReuse(b *testing.B) {
	bin := b.TempDir()
	if out, err := exec.Command("go", "build", "-o", bin, "../../cli/flowgate", "../../cli/flowgate-shim").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v: %s", err, out)
	}
	exe := filepath.Join(bin, "flowgate")
	pooled := func(maxIdle int) func(b *testing.B, dir string, steps, width int) {
		return func(b *testing.B, dir string, steps, width int) {
			shims := runner.NewShims(exe, nil)
			shims.MaxIdle = maxIdle
			ctx, cancel := context.WithCancel(b.Context())
			var kept sync.WaitGroup
			kept.Go(func() { shims.KeepWarm(ctx) })
			defer func() { cancel(); kept.Wait() }()
			for i := 1; i <= steps; i++ {
				var wg sync.WaitGroup
				for k := range width {
					wg.Go(func() {
						if _, err := floorStep(shims, filepath.Join(dir, strconv.Itoa(i), strconv.Itoa(k)), 1, nil); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
			}
		}
	}
	perFlow := func(b *testing.B, dir string, steps, width int) {
		w, err := shim.StartWarm(filepath.Join(bin, runner.ShimBinary), []string{shim.WarmArg}, shell.BaseEnv(os.Environ()))
		if err != nil {
			b.Fatal(err)
		}
		defer func() { w.Discard(); <-w.Exited() }()
		for i := 1; i <= steps*width; i++ {
			d := filepath.Join(dir, strconv.Itoa(i))
			if err := os.MkdirAll(d, 0o700); err != nil {
				b.Fatal(err)
			}
			if err := shim.Prepare(d); err != nil {
				b.Fatal(err)
			}
			entry, err := shim.SpecEntry(shim.Spec{TaskID: "flow-" + strconv.Itoa(i), Attempt: 1, Shell: "echo hello"})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := w.Hand(d, append(shell.BaseEnv(os.Environ()), entry)); err != nil {
				b.Fatal(err)
			}
			if code := <-w.Ended(); code != 0 {
				b.Fatalf("step %d: shim exit code %d", i, code)
			}
			if rec, err := shim.ReadRecord(d); err != nil || rec.Status == nil || rec.Status.ExitCode != 0 {
				b.Fatalf("step %d: %+v %v", i, rec.Status, err)
			}
		}
	}
	for _, shape := range []struct {
		name         string
		steps, width int
	}{{"chain20", 20, 1}, {"fanout8", 1, 8}} {
		for _, way := range []struct {
			name string
			run  func(b *testing.B, dir string, steps, width int)
		}{{"fresh", pooled(-1)}, {"pool", pooled(0)}, {"per_flow", perFlow}} {
			b.Run(shape.name+"/"+way.name, func(b *testing.B) {
				var took time.Duration
				for i := range b.N {
					dir := filepath.Join(b.TempDir(), fmt.Sprint(i))
					t0 := time.Now()
					way.run(b, dir, shape.steps, shape.width)
					took += time.Since(t0)
				}
				b.ReportMetric(float64(took.Microseconds())/1000/float64(b.N*shape.steps*shape.width), "ms/step")
			})
		}
	}
}
