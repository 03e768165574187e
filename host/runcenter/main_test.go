package runcenter_test

import (
	"os"
	"testing"

	"github.com/flowgate/flowgate/host/runner/shim"
)

// TestMain lets the test binary be the shims of the gateways the tests
// start: the default launcher runs the executable as "<exe> shim <dir>"
// or, pooled, "<exe> shim --warm". Without this, each shim would run the
// whole test suite again, gateways and tasks included.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "shim" {
		if os.Args[2] == shim.WarmArg {
			os.Exit(shim.MainWarm())
		}
		os.Exit(shim.Main(os.Args[2]))
	}
	os.Exit(m.Run())
}
