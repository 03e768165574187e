package shim

import (
	"errors"
	"syscall"
)

// This file is the logic of the macOS exit seam (exit_darwin.go) that
// needs no macOS system call, so that it builds, and is tested, on Linux
// too.

// procEvents is a queue that reports one process's exit.
type procEvents interface {
	// poll reports, without blocking, whether the exit event arrived.
	poll() (bool, error)
	close()
}

// exitedAlready is the queue of a process that had exited before it
// could be watched.
type exitedAlready struct{}

func (exitedAlready) poll() (bool, error) { return true, nil }
func (exitedAlready) close()              {}

// kqueueExit learns of the child's exit from a kqueue NOTE_EXIT event.
// Without a queue, or when polling it fails, it asks the process table
// instead: a zombie, or a pid no longer there, has exited.
type kqueueExit struct {
	q     procEvents // nil: no queue could be set up
	table processTable
	pid   int
	done  bool
}

func (k *kqueueExit) exited() bool {
	if k.done {
		return true
	}
	var got bool
	var err error
	for k.q != nil {
		got, err = k.q.poll()
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if k.q == nil || err != nil {
		s, serr := k.table.stat(k.pid)
		got = serr != nil || s.zombie
	}
	k.done = got
	return got
}

func (k *kqueueExit) close() {
	if k.q != nil {
		k.q.close()
	}
}
