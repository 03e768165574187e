package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowgate/flowgate/flows"
)

// BenchmarkPipelineString10Stages runs the pipeline string of the
// FigPipelineString figure in the controller's runtime: the exec stage's
// stdout (the 10,000 objects) decoded as exec --json decodes it, then the
// nine stages after it. flowgate bench measures the whole command against
// Lobster; this is the part that grows with the items.
func BenchmarkPipelineString10Stages(b *testing.B) {
	dir := b.TempDir()
	name, err := pipelineItems(dir)
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		b.Fatal(err)
	}
	_, rest, _ := strings.Cut(pipelineString(name), " | ")
	stages, err := flows.ParsePipeline(rest)
	if err != nil {
		b.Fatal(err)
	}
	cmds := flows.Builtins()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		v, err := flows.DecodeJSON(data)
		if err != nil {
			b.Fatal(err)
		}
		var out strings.Builder
		res, err := flows.RunPipeline(context.Background(), stages, 0, v.([]any), cmds, &out)
		if err != nil || !res.Rendered || !strings.Contains(out.String(), `"count": `) {
			b.Fatalf("the pipeline rendered %q (%v)", out.String(), err)
		}
	}
}
