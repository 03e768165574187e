package shim

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// waitidExit learns of the child's exit from waitid(2) with WNOWAIT,
// which reports an exited child without reaping it. It also reaps every
// other exited child of the shim: processes the child left behind, which
// were re-parented to the shim as a child subreaper.
type waitidExit struct {
	child int
	done  bool
}

func newExitWatch(child int) exitWatch { return &waitidExit{child: child} }

func (w *waitidExit) exited() bool {
	for !w.done {
		var si unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &si, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			// ECHILD: no children at all, so child is gone too.
			w.done = true
			break
		}
		switch pid := siginfoPid(&si); pid {
		case 0:
			return false
		case w.child:
			w.done = true
		default:
			_, _ = unix.Wait4(pid, nil, unix.WNOHANG, nil)
		}
	}
	return true
}

func (*waitidExit) close() {}

// siginfoPid returns si_pid, which unix.Siginfo keeps in its opaque part:
// it follows the three int32 fields si_signo, si_errno and si_code, at
// the next pointer-aligned offset.
func siginfoPid(si *unix.Siginfo) int {
	const ptr = unsafe.Sizeof(uintptr(0))
	const off = (3*4 + ptr - 1) &^ (ptr - 1)
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(si), off)))
}
