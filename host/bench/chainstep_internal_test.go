package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowgate/flowgate/plugins/pipeline"
	"github.com/flowgate/flowgate/sdk"
)

// chainRuns is how many runs of the 20-step chain BenchmarkChainStep
// measures after one to warm up.
const chainRuns = 15

// BenchmarkChainStep runs the bench's 20-step chain chainRuns times with
// the real `flowgate pipeline run` against a gateway in this process, as
// `flowgate bench` runs it with a gateway running, and reports the
// gateway's CPU time per step (user and system time of this process: the
// store, the runner and the pipeline controller, not the shims or the
// steps) and the wall time per run. The CPU per step is the figure that
// the load of a shared machine moves least, so it is the one to compare
// between two builds; run it with -cpuprofile to see where it goes.
// b.N is ignored: run it with -benchtime 1x.
func BenchmarkChainStep(b *testing.B) {
	bin := b.TempDir()
	if out, err := exec.Command("go", "build", "-o", bin, "../../cli/flowgate", "../../cli/flowgate-shim").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v: %s", err, out)
	}
	exe, dir := filepath.Join(bin, "flowgate"), b.TempDir()
	chain := filepath.Join(dir, "chain20.lobster")
	if err := os.WriteFile(chain, []byte(chainFile(20)), 0o600); err != nil {
		b.Fatal(err)
	}
	r := &run{cfg: Config{Self: exe}.WithDefaults(), sz: QuickSizes()}
	home := filepath.Join(dir, "home")
	g, err := r.gateway(home, r.sz.Concurrency, map[string]func(func(string) string) sdk.Controller{pipeline.Name: pipeline.NewFrom})
	if err != nil {
		b.Fatal(err)
	}
	if err := g.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = g.Stop(b.Context()) })
	runChain := func() {
		cmd := exec.CommandContext(b.Context(), exe, "pipeline", "run", chain)
		cmd.Env, cmd.Dir = append(os.Environ(), "FLOWGATE_HOME="+home), dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("flowgate pipeline run: %v: %s", err, out)
		}
	}
	runChain()
	b.ResetTimer()
	cpu, start := selfCPU(), time.Now()
	for range chainRuns {
		runChain()
	}
	cpu, wall := selfCPU()-cpu, time.Since(start)
	b.StopTimer()
	b.ReportMetric(ms(cpu)/(chainRuns*20), "gw-cpu-ms/step")
	b.ReportMetric(ms(wall)/chainRuns, "ms/run")
}
