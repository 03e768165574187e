package shim

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrGone is returned when a process is not there to be signalled: it
// exited, it is a zombie, or its pid now belongs to another process.
var ErrGone = errors.New("process is gone (exited, or its pid was reused)")

// ProcInfo identifies a process across pid reuse: a pid names a process
// only together with its start time. It is the content of shim.json and
// child.json.
type ProcInfo struct {
	PID int `json:"pid"`
	// StartTime is field 22 of /proc/<pid>/stat: clock ticks since boot.
	StartTime uint64 `json:"start_time"`
	// PGID is the process group. The child leads its own group, so its
	// PGID equals its PID; the shim leads its session and group.
	PGID int `json:"pgid,omitempty"`
	// StartedAt is the wall-clock time the shim recorded for the start.
	StartedAt time.Time `json:"started_at"`
}

// ReadInfo reads a ProcInfo file (D/shim.json or D/child.json). A missing
// file gives an error that matches fs.ErrNotExist.
func ReadInfo(path string) (ProcInfo, error) {
	var p ProcInfo
	err := readJSON(path, &p)
	return p, err
}

// procStat is what flowgate needs from /proc/<pid>/stat.
type procStat struct {
	state     byte
	pgrp      int
	startTime uint64
}

// zombie reports whether the process has exited and waits to be reaped.
func (s procStat) zombie() bool { return s.state == 'Z' || s.state == 'X' }

func readStat(pid int) (procStat, error) {
	if pid <= 0 {
		return procStat{}, fmt.Errorf("read stat of pid %d: %w", pid, ErrGone)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// parseStat parses a /proc/<pid>/stat line. The second field, the command
// name in parentheses, may itself hold spaces and ')', so the fields are
// counted from the last ')'.
func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("parse /proc stat %q: no ')' after the command name", b)
	}
	// Fields are numbered from 1 as in proc(5); the first after the name
	// is field 3.
	f := bytes.Fields(b[i+1:])
	const first, state, pgrp, starttime = 3, 3, 5, 22
	if len(f) <= starttime-first || len(f[state-first]) != 1 {
		return procStat{}, fmt.Errorf("parse /proc stat %q: too few fields", b)
	}
	g, err := strconv.Atoi(string(f[pgrp-first]))
	if err != nil {
		return procStat{}, fmt.Errorf("parse /proc stat: pgrp: %w", err)
	}
	st, err := strconv.ParseUint(string(f[starttime-first]), 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("parse /proc stat: starttime: %w", err)
	}
	return procStat{state: f[state-first][0], pgrp: g, startTime: st}, nil
}

// StartTime returns the start time of process pid in clock ticks since
// boot (field 22 of /proc/<pid>/stat). A pid that does not exist gives an
// error that matches fs.ErrNotExist.
func StartTime(pid int) (uint64, error) {
	s, err := readStat(pid)
	return s.startTime, err
}

// identify returns the identity of the live process pid, without
// StartedAt.
func identify(pid int) (ProcInfo, error) {
	s, err := readStat(pid)
	if err != nil {
		return ProcInfo{}, err
	}
	return ProcInfo{PID: pid, StartTime: s.startTime, PGID: s.pgrp}, nil
}

// Alive reports whether the process p describes still runs: its pid
// exists, is not a zombie, and started at p.StartTime. A pid reused by
// another process is not alive.
func Alive(p ProcInfo) bool {
	s, err := readStat(p.PID)
	return err == nil && !s.zombie() && s.startTime == p.StartTime
}

// Signal sends sig to the process p describes, and only to it: it returns
// an error matching ErrGone, and sends nothing, when the pid is gone, a
// zombie, or now another process. The identity check and the send cannot
// race with pid reuse: the process is pinned by a pidfd first.
func Signal(p ProcInfo, sig syscall.Signal) error {
	if p.PID <= 0 {
		return fmt.Errorf("signal pid %d: %w", p.PID, ErrGone)
	}
	fd, err := unix.PidfdOpen(p.PID, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return fmt.Errorf("signal pid %d: %w", p.PID, ErrGone)
	case errors.Is(err, unix.ENOSYS):
		fd = -1 // before Linux 5.3: check, then kill; a narrow race remains
	case err != nil:
		return fmt.Errorf("signal pid %d: pidfd_open: %w", p.PID, err)
	default:
		defer unix.Close(fd)
	}
	if !Alive(p) {
		return fmt.Errorf("signal pid %d (start time %d): %w", p.PID, p.StartTime, ErrGone)
	}
	if fd >= 0 {
		err = unix.PidfdSendSignal(fd, sig, nil, 0)
	} else {
		err = unix.Kill(p.PID, sig)
	}
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
func SignalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("signal process group %d: refusing an invalid group id", pgid)
	}
	err := unix.Kill(-pgid, sig)
	if errors.Is(err, unix.ESRCH) {
		err = ErrGone
	}
	if err != nil {
		return fmt.Errorf("signal process group %d: %w", pgid, err)
	}
	return nil
}
