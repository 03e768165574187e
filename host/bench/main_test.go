package bench_test

import (
	"os"
	"testing"

	"github.com/flowgate/flowgate/cli"
	"github.com/flowgate/flowgate/host/store/etcd/etcdtest"
)

// TestMain lets this test binary serve as the flowgate executable that a
// run starts: "shim DIR" for task shims and "plugin serve NAME" for the
// pipeline plugin, and "tasks run" for the command figures, as the real
// binary does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "shim" || os.Args[1] == "plugin" || os.Args[1] == "tasks") {
		os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	sharedEtcd.Close()
	os.Exit(code)
}

// sharedEtcd is the package's embedded etcd, started by the first test or
// benchmark that needs one.
var sharedEtcd etcdtest.Lazy
