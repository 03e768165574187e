package shim

import (
	"errors"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The shim is a child subreaper (PR_SET_CHILD_SUBREAPER): processes the
// child leaves behind are re-parented to the shim, not to init, so the
// shim can reap them and knows when its child's group is really empty,
// even where pid 1 never reaps.

// stragglerWait bounds how long the shim waits, after the child ended,
// for the rest of its process group to die of SIGKILL. Only a process in
// uninterruptible sleep outlasts it.
const stragglerWait = 5 * time.Second

// becomeSubreaper makes orphaned descendants the shim's children. Without
// it (a kernel older than 3.4), stragglers are still killed, only not
// awaited.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// childExited reaps every exited child of the shim except child itself,
// which it only reports: it returns true, leaving child a zombie, once
// child has exited. Keeping the zombie keeps its pid, and so its process
// group id, from being reused while the shim signals the group.
func childExited(child int) bool {
	for {
		var si unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &si, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			// ECHILD: no children at all, so child is gone too.
			return true
		}
		switch pid := siginfoPid(&si); pid {
		case 0:
			return false
		case child:
			return true
		default:
			_, _ = unix.Wait4(pid, nil, unix.WNOHANG, nil)
		}
	}
}

// siginfoPid returns si_pid, which unix.Siginfo keeps in its opaque part:
// it follows the three int32 fields si_signo, si_errno and si_code, at
// the next pointer-aligned offset.
func siginfoPid(si *unix.Siginfo) int {
	const ptr = unsafe.Sizeof(uintptr(0))
	const off = (3*4 + ptr - 1) &^ (ptr - 1)
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(si), off)))
}

// reap waits for child, which must have exited, and returns its status.
func reap(child int) unix.WaitStatus {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(child, &ws, 0, nil)
		if !errors.Is(err, unix.EINTR) {
			return ws
		}
	}
}

// drainGroup kills what is left of process group pgid and waits, up to
// stragglerWait, until no process of it remains, reaping those that
// were re-parented to the shim. wake delivers SIGCHLD.
func drainGroup(pgid int, wake <-chan os.Signal) {
	limit := time.NewTimer(stragglerWait)
	defer limit.Stop()
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	for {
		// Repeat the SIGKILL: it also catches a process forked while the
		// previous one was on its way.
		if SignalGroup(pgid, unix.SIGKILL) != nil {
			return
		}
		for {
			pid, err := unix.Wait4(-1, nil, unix.WNOHANG, nil)
			if pid <= 0 && !errors.Is(err, unix.EINTR) {
				break
			}
		}
		select {
		case <-limit.C:
			return
		case <-wake:
		case <-poll.C:
		}
	}
}
