package flows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowgate/flowgate/flows"
)

// benchPipeline is ten pure stages over the benchmark's items.
const benchPipeline = "where n>=100 | map --wrap item | map --unwrap item | sort --key n --desc | dedupe --key id | " +
	"pick id,n,tag | where tag!=x | groupBy --key tag | map --unwrap items | head --n 100000"

func benchItems(n int) []any {
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"id": float64(i), "n": float64((i * 7919) % 10000), "tag": fmt.Sprintf("t%d", i%10), "extra": "some text"}
	}
	return items
}

// BenchmarkPipeline10Stages runs benchPipeline over 10,000 items in the
// controller's runtime (no process, no disk).
func BenchmarkPipeline10Stages(b *testing.B) {
	stages, err := flows.ParsePipeline(benchPipeline)
	if err != nil {
		b.Fatal(err)
	}
	items := benchItems(10000)
	cmds := flows.Builtins()
	b.ResetTimer()
	for b.Loop() {
		if _, err := flows.RunPipeline(context.Background(), stages, 0, items, cmds, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPipelineSpeedAgainstLobster runs benchPipeline over 10,000 items
// here and with Lobster (npm install @clawdbot/lobster into the user cache
// on first use), in one run, and reports the ratio of Lobster's wall time
// to flowgate's. It runs only with FLOWGATE_BENCH_LOBSTER=1 and is skipped,
// saying why, when npm is unavailable.
func TestPipelineSpeedAgainstLobster(t *testing.T) {
	if os.Getenv("FLOWGATE_BENCH_LOBSTER") == "" {
		t.Skip("set FLOWGATE_BENCH_LOBSTER=1 to compare with Lobster (needs npm and the network on first use)")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed: cannot install @clawdbot/lobster to compare with")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no user cache directory to install Lobster into: ", err)
	}
	prefix := filepath.Join(cache, "flowgate-bench-lobster")
	bin := filepath.Join(prefix, "node_modules", ".bin", "lobster")
	if _, err := os.Stat(bin); err != nil {
		if out, err := exec.Command(npm, "install", "--prefix", prefix, "@clawdbot/lobster").CombinedOutput(); err != nil {
			t.Skipf("npm install @clawdbot/lobster failed: %v\n%s", err, out)
		}
	}
	items := benchItems(10000)
	data, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "items.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}

	// Lobster: the whole CLI, reading the items with exec.
	start := time.Now()
	out, err := exec.Command(bin, "run", "--mode", "tool", "exec --json --shell 'cat "+file+"' | "+benchPipeline).Output()
	lobster := time.Since(start)
	if err != nil {
		t.Fatalf("lobster: %v\n%s", err, out)
	}
	var env struct{ Output []any }
	if err := json.Unmarshal(out, &env); err != nil {
		t.Fatalf("lobster's envelope: %v", err)
	}

	// flowgate: parsing the same items and running the stages.
	start = time.Now()
	var decoded []any
	if err := json.Unmarshal(data, &decoded); err != nil {
		t.Fatal(err)
	}
	stages, err := flows.ParsePipeline(benchPipeline)
	if err != nil {
		t.Fatal(err)
	}
	res, err := flows.RunPipeline(context.Background(), stages, 0, decoded, flows.Builtins(), nil)
	ours := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != len(env.Output) {
		t.Fatalf("flowgate produced %d items, Lobster %d", len(res.Items), len(env.Output))
	}
	t.Logf("10-stage pipeline over 10,000 items: Lobster %v, flowgate %v, ratio %.1f×", lobster, ours, float64(lobster)/float64(ours))
	if lobster < 3*ours {
		t.Errorf("flowgate is less than 3× faster than Lobster (%v vs %v)", ours, lobster)
	}
}
