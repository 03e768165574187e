package shim

import (
	"fmt"
	"io/fs"
	"syscall"
)

// This file is the logic of the macOS process seam (proc_darwin.go)
// that needs no macOS system call, so that it builds, and is tested, on
// Linux too.

// kinfo is what proc_darwin.go takes from a struct kinfo_proc that
// sysctl kern.proc.pid.<pid> returned.
type kinfo struct {
	stat      int8  // p_stat: SIDL, SRUN, SSLEEP, SSTOP or SZOMB
	pgid      int32 // e_pgid
	sec, usec int64 // p_starttime
}

// darwinZombie is SZOMB from <sys/proc.h>: exited, not yet reaped.
const darwinZombie = 5

// kinfoStat turns what sysctl kern.proc.pid.<pid> returned into a
// procStat: no entry means no such process. The start time is kept in
// microseconds since the epoch, which tells two processes apart as well
// as Linux's clock ticks do.
func kinfoStat(pid int, procs []kinfo) (procStat, error) {
	if pid <= 0 || len(procs) == 0 {
		return procStat{}, fmt.Errorf("read kern.proc.pid.%d: %w", pid, fs.ErrNotExist)
	}
	p := procs[0]
	return procStat{
		zombie:    p.stat == darwinZombie,
		pgrp:      int(p.pgid),
		startTime: uint64(p.sec)*1_000_000 + uint64(p.usec),
	}, nil
}

// pinByPID is pin for a system without pidfds: a pid missing from the
// process table is gone; any other gets a handle that signals by pid,
// which Signal uses only after it checked the identity.
func pinByPID(t processTable, pid int, kill func(int, syscall.Signal) error) (pinned, error) {
	if _, err := t.stat(pid); err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrGone, err)
	}
	return byPID{pid: pid, kill: kill}, nil
}
