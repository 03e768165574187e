package shim

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// stragglerWait bounds how long the shim waits, after the child ended,
// for the rest of its process group to die of SIGKILL. Only a process in
// uninterruptible sleep outlasts it.
const stragglerWait = 5 * time.Second

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
// were re-parented to the shim (on Linux, where it is a child
// subreaper). wake delivers SIGCHLD.
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
