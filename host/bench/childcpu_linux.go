package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/flowgate/flowgate/host/runner/shim"
)

// liveCPUTold says liveChildrenCPU tells something here.
const liveCPUTold = true

// liveChildrenCPU returns, by pid, the CPU time this process's live
// children have used so far, their own and not that of the processes
// they waited for: the shims of a gateway's pool, which a dispatch
// round's count (RUSAGE_CHILDREN once the gateway's stop has reaped
// them) takes whole, including what they used before the round. It
// reads each child's threads' schedstat, which is exact to the
// nanosecond; /proc/<pid>/stat counts in 10 ms ticks, more than a shim
// uses to start. ok is false where the system does not tell it.
func liveChildrenCPU() (cpu map[int]time.Duration, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	cpu = map[int]time.Duration{}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, err := shim.ParentPID(pid); err != nil || ppid != self {
			continue // not a child, or gone meanwhile
		}
		threads, _ := filepath.Glob(filepath.Join("/proc", e.Name(), "task", "*", "schedstat"))
		for _, t := range threads {
			if b, err := os.ReadFile(t); err == nil {
				if f := bytes.Fields(b); len(f) > 0 {
					ns, _ := strconv.ParseInt(string(f[0]), 10, 64)
					cpu[pid] += time.Duration(ns)
				}
			}
		}
	}
	return cpu, true
}
