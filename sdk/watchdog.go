package sdk

import (
	"context"
	"time"
)

// watchParent calls gone, once, when getppid stops returning ppid: the
// parent died and the process was handed to another (init or a
// subreaper). It checks every interval and returns when ctx ends.
//
// go-plugin gives a plugin no sign that the gateway died; an idle plugin
// would run on forever (a logging one dies of SIGPIPE on its next write).
// Linux's parent-death signal cannot be set from the child, so the parent
// pid is polled. A plugin whose parent is init from the start (the gateway
// is pid 1 in a container) is never orphaned this way: the container ends
// with the gateway.
func watchParent(ctx context.Context, ppid int, getppid func() int, interval time.Duration, gone func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if getppid() != ppid {
				gone()
				return
			}
		}
	}
}
