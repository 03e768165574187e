package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/shell"
)

// chainFloor runs the steps of chainFile(n) as the runner runs a task,
// with no store and no controller: for each step an attempt directory,
// its record prepared, the previous step's stdout written as its stdin
// file, the spec handed to an idle lean shim of the pool shims keeps
// (runner.Shims, KeepWarm must run), the wait for the shim to record the
// step's end, the shim handed back, and the read of its record and its
// stdout. It returns the wall time per step: what a chain step costs,
// its shim reused, before the gateway records anything, which no change
// to the store or the controllers can take away.
func chainFloor(ctx context.Context, shims *runner.Shims, dir string, n int) (time.Duration, error) {
	start := time.Now()
	var prev []byte
	for i := 1; i <= n; i++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		out, err := floorStep(shims, filepath.Join(dir, strconv.Itoa(i)), i, prev)
		if err != nil {
			return 0, fmt.Errorf("step floor, step %d: %w", i, err)
		}
		prev = out
	}
	return time.Since(start) / time.Duration(n), nil
}

// floorStep runs step i of the chain in attempt directory dir, with stdin
// (the previous step's stdout) for every step but the first, and returns
// its stdout.
func floorStep(shims *runner.Shims, dir string, i int, stdin []byte) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := shim.Prepare(dir); err != nil {
		return nil, err
	}
	spec := shim.Spec{TaskID: "floor-" + strconv.Itoa(i), Attempt: 1, Shell: "echo hello"}
	if i > 1 {
		spec.Shell, spec.StdinPath = "cat", filepath.Join(dir, "stdin")
		if err := os.WriteFile(spec.StdinPath, stdin, 0o600); err != nil {
			return nil, err
		}
	}
	entry, err := shim.SpecEntry(spec)
	if err != nil {
		return nil, err
	}
	run, err := shims.Start(dir, append(shell.BaseEnv(os.Environ()), entry))
	if err != nil {
		return nil, err
	}
	<-run.Ended
	rec, err := shim.ReadRecord(dir)
	shims.Done(run, err == nil && rec.Status != nil)
	if err != nil {
		return nil, err
	}
	if rec.Status == nil || rec.Status.ExitCode != 0 || rec.Status.Reason != "" {
		return nil, fmt.Errorf("the shim in %s recorded %+v; the step must exit 0", dir, rec.Status)
	}
	return os.ReadFile(filepath.Join(dir, "stdout"))
}
