package shim

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// exitFD returns a descriptor that becomes readable when process pid
// exits: its pidfd, which also pins the pid. gone is true, with no
// descriptor (-1), when pid does not exist.
func exitFD(pid int) (fd int, gone bool, err error) {
	fd, err = unix.PidfdOpen(pid, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return -1, true, nil
	case err != nil:
		return -1, false, fmt.Errorf("%w: pidfd_open: %v", ErrNoExitNotice, err)
	}
	return fd, false, nil
}

// exitSeen reports, without blocking, whether the pidfd fd says its
// process exited: it polls readable once the process is gone.
func exitSeen(fd int) bool {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(pfd, 0)
		if !errors.Is(err, unix.EINTR) {
			return err == nil && n > 0
		}
	}
}
