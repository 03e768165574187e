package bench_test

import (
	"context"
	"fmt"
	"os"

	"github.com/flowgate/flowgate/host/bench"
	"github.com/flowgate/flowgate/plugins/pipeline"
)

// A quick run on the file system of the current directory, with progress
// on stderr, as flowgate bench --quick makes it.
func Example() {
	rep, err := bench.Run(context.Background(), bench.Config{Dir: ".", Quick: true, Progress: os.Stderr, Controller: pipeline.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range rep.Figures {
		fmt.Printf("%s: %s %s (%s×)\n", f.Title, bench.Format(f.Value), f.Unit, bench.Format(f.Ratio))
	}
	fmt.Println(rep.Verdict.Line)
}
