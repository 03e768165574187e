//go:build !linux

package bench

import "time"

// liveCPUTold says liveChildrenCPU tells something here.
const liveCPUTold = false

// liveChildrenCPU tells nothing outside Linux (see the Linux one): a
// dispatch round's CPU then includes its pooled shims' starts.
func liveChildrenCPU() (map[int]time.Duration, bool) { return nil, false }
