// Package exampletest lets a test that runs a non-Go example controller
// (examples/controllers) skip, or in CI fail, when the example's own
// toolchain is not set up. Only tests import it: it takes a testing.TB,
// and the shipped binaries must not link the testing package.
package exampletest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Require stops a test that needs the example controller in dir
// when the example's own toolchain is not set up. The README promises that
// the tests run on a machine with only Go installed, so there the test is
// skipped, with the setup step it needs. With CI set (.ci/run sets up both
// toolchains), a missing setup fails the test instead: CI must run it.
func Require(t testing.TB, dir string) {
	t.Helper()
	err := exampleReady(dir)
	if err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%v (CI must run this test; .ci/run sets it up)", err)
	}
	t.Skipf("%v; skipped here, run in CI", err)
}

// exampleReady reports whether the non-Go example controller in dir can
// start: a TypeScript example (package.json) needs node and its compiled
// dist/controller.js, a Python one (controller.py) a python3 with grpcio
// and protobuf, found as its plugin script finds it. The error names the
// setup step.
func exampleReady(dir string) error {
	switch {
	case exists(filepath.Join(dir, "package.json")):
		if _, err := exec.LookPath("node"); err != nil {
			return fmt.Errorf("%s needs node and npm: install them (apt-get install nodejs npm), then run npm ci there", dir)
		}
		if !exists(filepath.Join(dir, "dist", "controller.js")) {
			return fmt.Errorf("the TypeScript example in %s is not set up: run npm ci there", dir)
		}
	case exists(filepath.Join(dir, "controller.py")):
		for _, py := range []string{os.Getenv("FLOWGATE_PYTHON"), "/usr/bin/python3", "python3"} {
			if py != "" && exec.Command(py, "-c", "import grpc, google.protobuf").Run() == nil {
				return nil
			}
		}
		return fmt.Errorf("the Python example in %s needs a python3 with grpcio and protobuf: apt-get install python3-grpcio python3-protobuf", dir)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
