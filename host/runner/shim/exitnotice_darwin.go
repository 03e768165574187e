package shim

import (
	"errors"
	"fmt"
	"syscall"
)

// exitFD returns a descriptor that becomes readable when process pid
// exits: a kqueue with EVFILT_PROC/NOTE_EXIT registered for it. gone is
// true, with no descriptor (-1), when pid does not exist.
func exitFD(pid int) (fd int, gone bool, err error) {
	switch q := openKqueue(pid).(type) {
	case kqueue:
		return int(q), false, nil
	case exitedAlready:
		return -1, true, nil
	}
	return -1, false, fmt.Errorf("%w: kqueue EVFILT_PROC could not be set up", ErrNoExitNotice)
}

// exitSeen reports, without blocking, whether the kqueue fd delivered its
// process's exit event.
func exitSeen(fd int) bool {
	for {
		got, err := kqueue(fd).poll()
		if !errors.Is(err, syscall.EINTR) {
			return err == nil && got
		}
	}
}
