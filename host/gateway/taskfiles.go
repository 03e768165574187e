package gateway

import (
	"context"
	"os"

	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/store/etcd"
	"github.com/flowgate/flowgate/host/stored"
)

// What commands ask of the files and processes the gateway's runner
// keeps for a task, named here so that the runner's layout stays its
// own.

// ErrStoreHeld says an etcd store is served by a gateway elsewhere: a
// gateway started with Config.Solo (as a command that hosts one for its
// work does) fails with an error matching it when another member is
// there (etcd.ErrHeld).
var ErrStoreHeld = etcd.ErrHeld

// TaskLogDir is the directory of attempt n of task taskID in home dir,
// which holds its stdout, stderr and record (runner.LogDir).
func TaskLogDir(dir, taskID string, n int) string { return runner.LogDir(dir, taskID, n) }

// OpenTaskFile opens a file of a task's attempt for reading without
// following a link or blocking on a pipe (shim.OpenTaskFile): anything
// but a regular file is refused, and a missing file gives an error
// matching fs.ErrNotExist.
func OpenTaskFile(path string) (*os.File, error) { return shim.OpenTaskFile(path) }

// AwaitLaunched re-reads task t with get until its process has started,
// for at most ten seconds, and returns it as last read
// (runner.AwaitLaunched): a command that hosts a gateway for its own
// duration calls it before it stops that gateway.
func AwaitLaunched(ctx context.Context, dir string, t *stored.Task, get func(ctx context.Context, id string) (*stored.Task, error)) (*stored.Task, error) {
	return runner.AwaitLaunched(ctx, dir, t, get)
}

// ShimWarmArg is the flag that starts a pooled shim (shim.WarmArg).
const ShimWarmArg = shim.WarmArg

// ShimMain supervises the one task attempt in directory dir and returns
// the process's exit code (shim.Main); ShimMainWarm supervises the
// attempts a gateway hands it on stdin (shim.MainWarm). Each must run in
// a process of its own: the flowgate binary's hidden shim command.
func ShimMain(dir string) int { return shim.Main(dir) }

// ShimMainWarm: see ShimMain.
func ShimMainWarm() int { return shim.MainWarm() }
