package shim

import "syscall"

// The operating system seams. Identifying a process, signalling it or its
// group, learning that the child exited, and reaping differ between Linux
// and macOS; each sits behind one of the small interfaces below, which
// hostOS implements in proc_linux.go and proc_darwin.go (and exit_*.go,
// reap_*.go). The logic around them (the pid-reuse rule, when a signal
// may be sent, how an exit is noticed) is written once, here and in
// proc.go, and tested on Linux with fakes standing in for macOS.

// procStat is what flowgate needs to know about a live process.
type procStat struct {
	// zombie is true once the process exited and waits to be reaped.
	zombie bool
	pgrp   int
	// startTime is the process's start time (see ProcInfo.StartTime).
	startTime uint64
}

// processTable reads the operating system's process table.
type processTable interface {
	// stat returns what the table says about pid. A pid that does not
	// exist gives an error matching fs.ErrNotExist.
	stat(pid int) (procStat, error)
}

// processOS identifies and signals processes.
type processOS interface {
	processTable
	// pin holds on to process pid, so that a signal sent through the
	// handle reaches that process and no later owner of its pid. Where
	// the system cannot pin, the handle sends by pid. A pid that does
	// not exist gives an error matching ErrGone.
	pin(pid int) (pinned, error)
	// killGroup sends sig to every process of group pgid (kill(-pgid)).
	killGroup(pgid int, sig syscall.Signal) error
}

// pinned is a process held by processOS.pin.
type pinned interface {
	signal(sig syscall.Signal) error
	close()
}

// exitWatch tells the shim that its child exited, without reaping it:
// the zombie keeps the child's pid, and so its process group id, from
// being reused while the shim still signals the group.
type exitWatch interface {
	// exited reports, without blocking, whether the child has exited.
	// Once true it stays true.
	exited() bool
	close()
}

// byPID is the pinned handle of a system that cannot pin a process: it
// signals the pid, after the caller checked its identity.
type byPID struct {
	pid  int
	kill func(pid int, sig syscall.Signal) error
}

func (p byPID) signal(sig syscall.Signal) error { return p.kill(p.pid, sig) }
func (byPID) close()                            {}
