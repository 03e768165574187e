package shim

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrGone is returned when a process is not there to be signalled: it
// exited, it is a zombie, or its pid now belongs to another process.
var ErrGone = errors.New("process is gone (exited, or its pid was reused)")

// ProcInfo identifies a process across pid reuse: a pid names a process
// only together with its start time. It is Record.Shim and Record.Child
// (and the content of shim.json and child.json of older shims).
type ProcInfo struct {
	PID int `json:"pid"`
	// StartTime is when the process started, as the operating system
	// keeps it: on Linux field 22 of /proc/<pid>/stat (clock ticks since
	// boot), on macOS kinfo_proc's p_starttime in microseconds since the
	// Unix epoch. It is only ever compared for equality, on the machine
	// that recorded it.
	StartTime uint64 `json:"start_time"`
	// PGID is the process group. The child leads its own group, so its
	// PGID equals its PID; the shim leads its session and group.
	PGID int `json:"pgid,omitempty"`
	// StartedAt is the wall-clock time the shim recorded for the start.
	StartedAt time.Time `json:"started_at"`
}

// StartTime returns the start time of process pid (see
// ProcInfo.StartTime). A pid that does not exist gives an error that
// matches fs.ErrNotExist.
func StartTime(pid int) (uint64, error) {
	s, err := hostOS{}.stat(pid)
	return s.startTime, err
}

// identify returns the identity of the live process pid, without
// StartedAt.
func identify(pid int) (ProcInfo, error) {
	s, err := hostOS{}.stat(pid)
	if err != nil {
		return ProcInfo{}, err
	}
	return ProcInfo{PID: pid, StartTime: s.startTime, PGID: s.pgrp}, nil
}

// Alive reports whether the process p describes still runs: its pid
// exists, is not a zombie, and started at p.StartTime. A pid reused by
// another process is not alive.
func Alive(p ProcInfo) bool { return alive(hostOS{}, p) }

func alive(sys processTable, p ProcInfo) bool {
	s, err := sys.stat(p.PID)
	return err == nil && !s.zombie && s.startTime == p.StartTime
}

// Signal sends sig to the process p describes, and only to it: it returns
// an error matching ErrGone, and sends nothing, when the pid is gone, a
// zombie, or now another process. On Linux the identity check and the
// send cannot race with pid reuse: the process is pinned by a pidfd
// first. On macOS, and on Linux before 5.3, a narrow window remains
// between the check and kill(2).
func Signal(p ProcInfo, sig syscall.Signal) error { return signalOne(hostOS{}, p, sig) }

func signalOne(sys processOS, p ProcInfo, sig syscall.Signal) error {
	if p.PID <= 0 {
		return fmt.Errorf("signal pid %d: %w", p.PID, ErrGone)
	}
	h, err := sys.pin(p.PID)
	if err != nil {
		return fmt.Errorf("signal pid %d: %w", p.PID, err)
	}
	defer h.close()
	if !alive(sys, p) {
		return fmt.Errorf("signal pid %d (start time %d): %w", p.PID, p.StartTime, ErrGone)
	}
	err = h.signal(sig)
	if errors.Is(err, unix.ESRCH) {
		err = ErrGone
	}
	if err != nil {
		return fmt.Errorf("signal pid %d: %w", p.PID, err)
	}
	return nil
}

// SignalGroup sends sig to every process in process group pgid. It
// refuses pgid 0 and 1, which kill(2) would read as "my own group" and
// "every process". An empty group gives an error matching ErrGone.
//
// A group id stays reserved while any member lives, so the group is the
// one that was started if its leader's identity was checked (Alive)
// first, or if the group is not empty.
func SignalGroup(pgid int, sig syscall.Signal) error { return signalGroup(hostOS{}, pgid, sig) }

func signalGroup(sys processOS, pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("signal process group %d: refusing an invalid group id", pgid)
	}
	err := sys.killGroup(pgid, sig)
	if errors.Is(err, unix.ESRCH) {
		err = ErrGone
	}
	if err != nil {
		return fmt.Errorf("signal process group %d: %w", pgid, err)
	}
	return nil
}
