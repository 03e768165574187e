package engine_test

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/flowgate/flowgate/host/store/etcd/etcdtest"
)

// etcdServer, once set, makes openStore return an etcd store on a prefix
// of the test's own instead of a bbolt file.
var etcdServer *etcdtest.Server

// TestMain runs the package's tests twice: on bbolt, then on an embedded
// etcd, the two store backends the engine must behave the same on. A
// failure names its backend (see openStore). Tests that reopen a store
// file (crash and restart tests) stay on bbolt both times.
func TestMain(m *testing.M) {
	code := m.Run()
	if profiling() {
		// A second m.Run would write its profile over the first's.
		fmt.Println("engine tests not run again on etcd: a profile is being written, and covers the bbolt pass")
		os.Exit(code)
	}
	srv, err := etcdtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "engine tests on etcd:", err)
		os.Exit(1)
	}
	etcdServer = srv
	fmt.Println("engine tests again, on an embedded etcd")
	code = max(code, m.Run())
	if err := srv.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "stop the embedded etcd:", err)
	}
	os.Exit(code)
}

// profiling reports whether the test binary writes a CPU, memory, block
// or mutex profile.
func profiling() bool {
	for _, name := range []string{"test.cpuprofile", "test.memprofile", "test.blockprofile", "test.mutexprofile"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return true
		}
	}
	return false
}

// bboltOnly skips t in the etcd pass: a test that crashes or reopens a
// store file of its own tests bbolt, and ran in the bbolt pass.
func bboltOnly(t testing.TB) {
	if etcdServer != nil {
		t.Skip("reopens a bbolt file of its own; ran in the bbolt pass")
	}
}
