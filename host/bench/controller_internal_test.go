package bench

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/flowgate/flowgate/plugins/pipeline"
)

// BenchmarkControllerRoundTrip measures the controller round trip as
// `flowgate bench` does (the pipeline controller served by the real
// flowgate binary as a plugin, against the same controller in this
// process) and reports both p50s of both events. Run it with
// -cpuprofile to see the host's side, and perf on the plugin's
// process for its side. b.N is ignored: run it with -benchtime 1x.
func BenchmarkControllerRoundTrip(b *testing.B) {
	bin := b.TempDir()
	if out, err := exec.Command("go", "build", "-o", bin, "../../cli/flowgate").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v: %s", err, out)
	}
	sz := QuickSizes()
	sz.Rounds, sz.ControllerCalls = 3, 300
	r := &run{cfg: Config{Self: filepath.Join(bin, "flowgate"), Controller: pipeline.New()}.WithDefaults(), sz: sz, tmp: b.TempDir()}
	b.ResetTimer()
	figs, err := r.controller(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	for _, f := range figs {
		b.ReportMetric(f.Value, f.Name+"-ms")
		b.ReportMetric(f.Baseline, f.Name+"-inproc-ms")
	}
}
