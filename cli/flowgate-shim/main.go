// Command flowgate-shim supervises one task attempt: the gateway starts
// it as "flowgate-shim <attempt-dir>" for every task it runs, when it
// finds this binary next to its own (see runner.Config.Launch).
//
// Started as "flowgate-shim --warm", it is a warm shim: the gateway
// starts one ahead of the next task and hands it the attempt directory
// and spec on its stdin when the task starts (see shim.MainWarm); with
// nothing handed over, it exits when its stdin closes.
//
// It does what "flowgate shim <attempt-dir>" does, in a binary that links
// only the shim: Go runs the initialisation of every package a binary
// links before main, and the flowgate binary's (gRPC, cobra, bbolt, …)
// would cost every task several milliseconds of CPU. docs/performance.md
// has the figures.
package main

import (
	"fmt"
	"os"

	"github.com/flowgate/flowgate/host/runner/shim"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == shim.WarmArg {
		os.Exit(shim.MainWarm())
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: flowgate-shim <attempt-dir> | flowgate-shim --warm (started by the gateway for each task attempt; not meant to be run by hand)")
		os.Exit(2)
	}
	os.Exit(shim.Main(os.Args[1]))
}
