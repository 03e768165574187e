package shim

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// ErrNoExitNotice is returned by NotifyExit where the system cannot tell
// when a process that is not the caller's child exits (Linux before 5.3):
// the caller checks Alive from time to time instead.
var ErrNoExitNotice = errors.New("this system gives no notice of another process's exit")

// NotifyExit returns a channel that is closed once the process p describes
// has exited, without polling: through a pidfd on Linux, a kqueue
// EVFILT_PROC/NOTE_EXIT event on macOS. The process needs not be the
// caller's child; a gateway uses it for the shims it reattached to after a
// restart. The process is pinned (Linux) or registered (macOS) before its
// identity is checked, so a pid already reused by another process counts
// as exited at once, and a later reuse cannot be mistaken for it.
//
// stop releases the watch; the channel is then never closed unless the
// exit was seen first. Call it once the answer is no longer needed. An
// error matching ErrNoExitNotice means the system cannot watch the
// process (nothing to stop then).
func NotifyExit(p ProcInfo) (exited <-chan struct{}, stop func(), err error) {
	done := make(chan struct{})
	if p.PID <= 0 {
		close(done) // names no process: nothing to wait for
		return done, func() {}, nil
	}
	fd, gone, err := exitFD(p.PID)
	if err != nil {
		return nil, nil, fmt.Errorf("watch the exit of pid %d: %w", p.PID, err)
	}
	if gone || !Alive(p) {
		if fd >= 0 {
			_ = unix.Close(fd)
		}
		close(done)
		return done, func() {}, nil
	}
	// Non-blocking, so that os.NewFile hands the descriptor to the Go
	// runtime's poller and the wait below parks no thread.
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, nil, fmt.Errorf("watch the exit of pid %d: %w: %v", p.PID, ErrNoExitNotice, err)
	}
	f := os.NewFile(uintptr(fd), "exit of pid "+strconv.Itoa(p.PID))
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("watch the exit of pid %d: %w: %v", p.PID, ErrNoExitNotice, err)
	}
	var once sync.Once
	release := func() { once.Do(func() { f.Close() }) }
	go func() {
		// Read calls the function, and waits for the descriptor to be
		// readable while it returns false; closing f ends the wait with
		// an error.
		err := rc.Read(func(fd uintptr) bool { return exitSeen(int(fd)) })
		release()
		if err == nil {
			close(done)
		}
	}()
	return done, release, nil
}
