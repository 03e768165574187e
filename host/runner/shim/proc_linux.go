package shim

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// hostOS is Linux: identity from /proc/<pid>/stat, signals through a
// pidfd, exits from waitid, orphans reaped as a child subreaper.
type hostOS struct{}

func (hostOS) stat(pid int) (procStat, error) {
	if pid <= 0 {
		return procStat{}, fmt.Errorf("read stat of pid %d: %w", pid, ErrGone)
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	s, err := parseStat(b)
	if err != nil {
		return procStat{}, err
	}
	return procStat{zombie: s.state == 'Z' || s.state == 'X', pgrp: s.pgrp, startTime: s.startTime}, nil
}

// pidfd is a process pinned by pidfd_open(2).
type pidfd int

func (fd pidfd) signal(sig syscall.Signal) error { return unix.PidfdSendSignal(int(fd), sig, nil, 0) }
func (fd pidfd) close()                          { _ = unix.Close(int(fd)) }

func (hostOS) pin(pid int) (pinned, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return nil, ErrGone
	case errors.Is(err, unix.ENOSYS):
		return byPID{pid: pid, kill: unix.Kill}, nil // before Linux 5.3
	case err != nil:
		return nil, fmt.Errorf("pidfd_open: %w", err)
	}
	return pidfd(fd), nil
}

func (hostOS) killGroup(pgid int, sig syscall.Signal) error { return unix.Kill(-pgid, sig) }

// ParentPID returns the parent pid of process pid, from
// /proc/<pid>/stat (Linux only): flowgate bench finds a gateway's pooled
// shims, its children, by it.
func ParentPID(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s, err := parseStat(b)
	return s.ppid, err
}

// linuxStat is what flowgate reads from /proc/<pid>/stat.
type linuxStat struct {
	state     byte
	ppid      int
	pgrp      int
	startTime uint64
}

// parseStat parses a /proc/<pid>/stat line. The second field, the command
// name in parentheses, may itself hold spaces and ')', so the fields are
// counted from the last ')'.
func parseStat(b []byte) (linuxStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return linuxStat{}, fmt.Errorf("parse /proc stat %q: no ')' after the command name", b)
	}
	// Fields are numbered from 1 as in proc(5); the first after the name
	// is field 3.
	f := bytes.Fields(b[i+1:])
	const first, state, ppid, pgrp, starttime = 3, 3, 4, 5, 22
	if len(f) <= starttime-first || len(f[state-first]) != 1 {
		return linuxStat{}, fmt.Errorf("parse /proc stat %q: too few fields", b)
	}
	pp, err := strconv.Atoi(string(f[ppid-first]))
	if err != nil {
		return linuxStat{}, fmt.Errorf("parse /proc stat: ppid: %w", err)
	}
	g, err := strconv.Atoi(string(f[pgrp-first]))
	if err != nil {
		return linuxStat{}, fmt.Errorf("parse /proc stat: pgrp: %w", err)
	}
	st, err := strconv.ParseUint(string(f[starttime-first]), 10, 64)
	if err != nil {
		return linuxStat{}, fmt.Errorf("parse /proc stat: starttime: %w", err)
	}
	return linuxStat{state: f[state-first][0], ppid: pp, pgrp: g, startTime: st}, nil
}
