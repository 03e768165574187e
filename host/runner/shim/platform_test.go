package shim

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// These tests run the logic of the macOS seams (proc_darwin.go,
// exit_darwin.go) on Linux, with fakes standing in for sysctl, kill(2)
// and kqueue, which cannot run here.

// fakeOS is a process table and kill(2): procs maps a pid to what sysctl
// would report, sent records the signals delivered.
type fakeOS struct {
	procs   map[int]kinfo
	sendErr error
	sent    []string
}

func (f *fakeOS) stat(pid int) (procStat, error) {
	var found []kinfo
	if p, ok := f.procs[pid]; ok {
		found = append(found, p)
	}
	return kinfoStat(pid, found)
}

func (f *fakeOS) kill(pid int, sig syscall.Signal) error {
	if f.sendErr != nil {
		return f.sendErr
	}
	f.sent = append(f.sent, fmt.Sprintf("%d:%d", pid, sig))
	return nil
}

func (f *fakeOS) pin(pid int) (pinned, error) { return pinByPID(f, pid, f.kill) }

func (f *fakeOS) killGroup(pgid int, sig syscall.Signal) error { return f.kill(-pgid, sig) }

const darwinRunning = 2 // SRUN

func TestKinfoStat(t *testing.T) {
	t.Parallel()
	s, err := kinfoStat(42, []kinfo{{stat: darwinRunning, pgid: 40, sec: 1_700_000_000, usec: 123_456}})
	require.NoError(t, err)
	require.Equal(t, procStat{pgrp: 40, startTime: 1_700_000_000_123_456}, s)

	s, err = kinfoStat(42, []kinfo{{stat: darwinZombie, pgid: 42, sec: 1}})
	require.NoError(t, err)
	require.True(t, s.zombie, "SZOMB is a zombie")

	for _, pid := range []int{42, 0, -1} {
		_, err = kinfoStat(pid, nil)
		require.ErrorIs(t, err, fs.ErrNotExist, "pid %d: sysctl returned nothing", pid)
	}
	a, _ := kinfoStat(1, []kinfo{{sec: 10, usec: 1}})
	b, _ := kinfoStat(1, []kinfo{{sec: 10, usec: 2}})
	require.NotEqual(t, a.startTime, b.startTime, "a microsecond apart is another process")
}

func TestAliveNeedsPidAndStartTime(t *testing.T) {
	t.Parallel()
	sys := &fakeOS{procs: map[int]kinfo{
		7: {stat: darwinRunning, pgid: 7, sec: 100, usec: 5},
		8: {stat: darwinZombie, pgid: 8, sec: 100},
	}}
	require.True(t, alive(sys, ProcInfo{PID: 7, StartTime: 100_000_005}))
	require.False(t, alive(sys, ProcInfo{PID: 7, StartTime: 100_000_004}), "the pid was reused")
	require.False(t, alive(sys, ProcInfo{PID: 8, StartTime: 100_000_000}), "a zombie")
	require.False(t, alive(sys, ProcInfo{PID: 9, StartTime: 1}), "no such pid")
}

func TestSignalChecksIdentityWithoutPidfd(t *testing.T) {
	t.Parallel()
	sys := &fakeOS{procs: map[int]kinfo{7: {stat: darwinRunning, pgid: 7, sec: 100}}}
	me := ProcInfo{PID: 7, StartTime: 100_000_000}

	reused := me
	reused.StartTime++
	require.ErrorIs(t, signalOne(sys, reused, syscall.SIGTERM), ErrGone)
	require.ErrorIs(t, signalOne(sys, ProcInfo{PID: 9, StartTime: 1}, syscall.SIGTERM), ErrGone)
	require.ErrorIs(t, signalOne(sys, ProcInfo{}, syscall.SIGTERM), ErrGone)
	require.Empty(t, sys.sent, "nothing is sent to a pid that is not the process recorded")

	require.NoError(t, signalOne(sys, me, syscall.SIGTERM))
	require.Equal(t, []string{"7:15"}, sys.sent)

	sys.sendErr = syscall.ESRCH // it exited between the check and the kill
	require.ErrorIs(t, signalOne(sys, me, syscall.SIGTERM), ErrGone)
}

func TestSignalGroupSeam(t *testing.T) {
	t.Parallel()
	sys := &fakeOS{}
	for _, pgid := range []int{-3, 0, 1} {
		require.ErrorContains(t, signalGroup(sys, pgid, syscall.SIGKILL), "refusing")
	}
	require.Empty(t, sys.sent)
	require.NoError(t, signalGroup(sys, 40, syscall.SIGKILL))
	require.Equal(t, []string{"-40:9"}, sys.sent)
	sys.sendErr = syscall.ESRCH
	require.ErrorIs(t, signalGroup(sys, 40, syscall.SIGKILL), ErrGone, "an empty group")
}

// fakeQueue is a kqueue whose polls return the next of results.
type fakeQueue struct {
	results []error // nil: no event yet; errExit: NOTE_EXIT; else the poll error
	polls   int
	closed  bool
}

var errExit = errors.New("NOTE_EXIT")

func (q *fakeQueue) poll() (bool, error) {
	r := q.results[min(q.polls, len(q.results)-1)]
	q.polls++
	if r == errExit {
		return true, nil
	}
	return false, r
}

func (q *fakeQueue) close() { q.closed = true }

func TestKqueueExit(t *testing.T) {
	t.Parallel()
	running := &fakeOS{procs: map[int]kinfo{7: {stat: darwinRunning, sec: 1}}}
	zombie := &fakeOS{procs: map[int]kinfo{7: {stat: darwinZombie, sec: 1}}}

	q := &fakeQueue{results: []error{nil, syscall.EINTR, errExit, nil}}
	k := &kqueueExit{q: q, table: running, pid: 7}
	require.False(t, k.exited())
	require.True(t, k.exited(), "an interrupted poll is repeated, then sees NOTE_EXIT")
	require.True(t, k.exited(), "once exited, always exited: the one-shot event is not polled again")
	require.Equal(t, 3, q.polls)
	k.close()
	require.True(t, q.closed)

	broken := &fakeQueue{results: []error{syscall.EBADF}}
	require.False(t, (&kqueueExit{q: broken, table: running, pid: 7}).exited(), "a failed poll asks the process table")
	require.True(t, (&kqueueExit{q: broken, table: zombie, pid: 7}).exited())

	require.False(t, (&kqueueExit{table: running, pid: 7}).exited(), "no queue: the process table")
	require.True(t, (&kqueueExit{table: zombie, pid: 7}).exited())
	require.True(t, (&kqueueExit{table: &fakeOS{}, pid: 7}).exited(), "a pid no longer there has exited")
	require.True(t, (&kqueueExit{q: exitedAlready{}, table: running, pid: 7}).exited(),
		"registering after the exit (ESRCH) counts as the exit")
}
