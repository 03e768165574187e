package shim

import (
	"errors"

	"golang.org/x/sys/unix"
)

// kqueue is a kqueue(2) with EVFILT_PROC/NOTE_EXIT registered for one
// process: macOS's way to learn that a child exited without reaping it.
type kqueue int

func newExitWatch(child int) exitWatch {
	return &kqueueExit{q: openKqueue(child), table: hostOS{}, pid: child}
}

// openKqueue registers for child's exit. A child that exited already
// (ESRCH) gets a queue that reports the exit; one that cannot be watched
// at all gets nil, and kqueueExit falls back on the process table.
func openKqueue(child int) procEvents {
	fd, err := unix.Kqueue()
	if err != nil {
		return nil
	}
	ev := []unix.Kevent_t{{}}
	unix.SetKevent(&ev[0], child, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev[0].Fflags = unix.NOTE_EXIT
	if _, err := unix.Kevent(fd, ev, nil, nil); err != nil {
		_ = unix.Close(fd)
		if errors.Is(err, unix.ESRCH) {
			return exitedAlready{}
		}
		return nil
	}
	return kqueue(fd)
}

func (q kqueue) poll() (bool, error) {
	ev := make([]unix.Kevent_t, 1)
	n, err := unix.Kevent(int(q), nil, ev, &unix.Timespec{})
	if err != nil {
		return false, err
	}
	return n > 0 && ev[0].Filter == unix.EVFILT_PROC && ev[0].Fflags&unix.NOTE_EXIT != 0, nil
}

func (q kqueue) close() { _ = unix.Close(int(q)) }
