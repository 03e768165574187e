package shim

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// hostOS is macOS: identity from sysctl kern.proc.pid.<pid>, signals by
// pid after the identity check (macOS has no pidfd), exits from kqueue
// EVFILT_PROC/NOTE_EXIT, and no child subreaper.
type hostOS struct{}

func (hostOS) stat(pid int) (procStat, error) {
	if pid <= 0 {
		return kinfoStat(pid, nil)
	}
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.pid", pid)
	if err != nil {
		return procStat{}, err
	}
	found := make([]kinfo, len(procs))
	for i, p := range procs {
		found[i] = kinfo{
			stat: p.Proc.P_stat,
			pgid: p.Eproc.Pgid,
			sec:  int64(p.Proc.P_starttime.Sec),
			usec: int64(p.Proc.P_starttime.Usec),
		}
	}
	return kinfoStat(pid, found)
}

func (h hostOS) pin(pid int) (pinned, error) {
	return pinByPID(h, pid, unix.Kill)
}

func (hostOS) killGroup(pgid int, sig syscall.Signal) error { return unix.Kill(-pgid, sig) }
