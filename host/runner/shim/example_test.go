package shim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/sdk"
)

// The gateway's side of the protocol: write the spec, and see it on disk
// as the shim will read it.
func ExampleWriteSpec() {
	dir, err := os.MkdirTemp("", "attempt")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	err = shim.WriteSpec(dir, shim.Spec{
		TaskID: "t-1", FlowID: "f-1", Attempt: 1,
		Shell:        "make test",
		ProgressPath: "/var/lib/flowgate/logs/t-1/progress.jsonl",
		Timeout:      sdk.Duration(10 * time.Minute),
		NoProgress:   sdk.Duration(time.Minute),
	})
	if err != nil {
		panic(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, shim.SpecFile))
	if err != nil {
		panic(err)
	}
	fmt.Print(string(b))
	// Output:
	// {"task_id":"t-1","flow_id":"f-1","attempt":1,"shell":"make test","progress_path":"/var/lib/flowgate/logs/t-1/progress.jsonl","timeout":"10m0s","no_progress":"1m0s"}
}

// Starting a shim and following it: what the gateway does for one attempt.
func ExampleLaunch() {
	dir := "/var/lib/flowgate/logs/t-1/1"
	entry, err := shim.SpecEntry(shim.Spec{TaskID: "t-1", FlowID: "f-1", Attempt: 1, Shell: "make test"})
	if err != nil {
		panic(err)
	}
	// The spec reaches the shim on its stdin.
	proc, err := shim.Launch("/usr/local/bin/flowgate-shim", []string{dir}, append(os.Environ(), entry))
	if err != nil {
		panic(err)
	}
	go func() { _, _ = proc.Wait() }() // reap it while this process lives

	// Later, or after a restart: ended, still running, or lost?
	rec, err := shim.ReadRecord(dir)
	switch {
	case err != nil:
		panic(err)
	case rec.Status != nil:
		fmt.Println("ended:", rec.Status.ExitCode, rec.Status.Reason)
	case rec.Shim != nil && shim.Alive(*rec.Shim):
		// Cancel: the shim stops the child's group and records "cancelled".
		_ = shim.Signal(*rec.Shim, syscall.SIGTERM)
	}
}
