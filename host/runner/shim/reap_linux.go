package shim

import "golang.org/x/sys/unix"

// becomeSubreaper makes orphaned descendants the shim's children
// (PR_SET_CHILD_SUBREAPER), so the shim can reap them and knows when its
// child's group is really empty, even where pid 1 never reaps. Without
// it (a kernel older than 3.4), stragglers are still killed, only not
// awaited.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}
