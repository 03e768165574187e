package shim

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pollEvery is how often the shim looks at the progress file, and how
// often it checks for the child's exit should a SIGCHLD be missed.
const pollEvery = 100 * time.Millisecond

// Main runs the shim for attempt directory dir, as "flowgate-shim <dir>"
// (or "flowgate shim <dir>"), and returns the process exit code: 0 once
// the attempt's status is recorded, or when the attempt was withdrawn
// before the shim could claim it (it then runs nothing); 1 when the shim
// could not claim the attempt or record its status; 2 when the spec is
// invalid (the record then says so); 3 when the spec on stdin was cut
// short (nothing is claimed, so the next gateway queues the attempt
// again). It must run in a process of its own: it takes over SIGTERM,
// SIGINT, SIGHUP, SIGPIPE and SIGCHLD and makes the process a child
// subreaper.
func Main(dir string) int {
	oneProc()
	// Notify, not Ignore: an ignored signal stays ignored in the child
	// across exec, and a task must see SIGHUP and SIGPIPE as usual.
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGPIPE, unix.SIGCHLD)
	defer signal.Stop(sigs)

	now := time.Now()
	spec, specErr := readSpecFrom(os.Stdin, dir)
	if errors.Is(specErr, errHandoffCut) {
		return 3
	}
	self, err := identifySelf()
	if err != nil {
		return 1
	}
	code, ended := attend(dir, self, spec, specErr, now, sigs)
	if ended != nil && ended.syncClose() != nil && code == 0 {
		code = 1
	}
	return code
}

// oneProc runs the shim's goroutines on one P. A shim waits nearly all
// the time, and each of a task's steps (the hand-over, the claim, the
// fork, SIGCHLD, the end) wakes it for a moment: with a P per core, Go
// wakes and parks a second thread at each of those moments to look for
// more work, which cost a pooled shim about a quarter of its CPU per task
// (docs/performance.md). A syscall that blocks still hands the P over,
// and the child does not inherit the setting.
func oneProc() { runtime.GOMAXPROCS(1) }

// identifySelf makes the shim a child subreaper and returns its own
// identity, without StartedAt. Both hold for the life of the process,
// so a warm shim does this once for all the attempts it runs.
func identifySelf() (ProcInfo, error) {
	_ = becomeSubreaper()
	return identify(os.Getpid())
}

// attend claims attempt dir for the shim self (identifySelf), which
// received the attempt's spec (or why it could not be read) at now, runs
// it and writes how it ended; it returns Main's exit code and, when the
// end is written, the record, its end not yet synced. The caller syncs
// it (syncClose), unless it knows the gateway recorded that end (a warm
// shim handed its next attempt, see MainWarm).
func attend(dir string, self ProcInfo, spec Spec, specErr error, now time.Time, sigs <-chan os.Signal) (int, *recordWriter) {
	self.StartedAt = now
	rec, err := claimRecord(dir, Record{Shim: &self}, spec.claimSynced())
	if errors.Is(err, errClaimed) {
		return 0, nil // withdrawn: the record says so
	}
	if err != nil {
		return 1, nil
	}
	if specErr != nil {
		_ = rec.finish(notRun(ExitCannotRun, ReasonStartFailed, fmt.Sprintf("read spec: %v", specErr)))
		return 2, rec
	}
	if err := rec.finish(run(dir, rec, spec.WithDefaults(), sigs)); err != nil {
		rec.close()
		return 1, nil
	}
	return 0, rec
}

// finish writes how the attempt ended, without a sync (see attend).
func (w *recordWriter) finish(s Status) error {
	rec := w.rec
	rec.Status = &s
	return w.write(rec, false)
}

// notRun is the status of an attempt whose child never started.
func notRun(code int, reason, msg string) Status {
	now := time.Now()
	return Status{ExitCode: code, Reason: reason, Error: msg, StartedAt: now, EndedAt: now}
}

// run starts the child, watches it until it ends, and returns its status.
func run(dir string, rec *recordWriter, spec Spec, sigs <-chan os.Signal) Status {
	if !spec.Deadline.IsZero() && !time.Now().Before(spec.Deadline) {
		return notRun(ExitNotRun, ReasonBudgetExceeded,
			fmt.Sprintf("not started: the deadline %s had passed", spec.Deadline.Format(time.RFC3339)))
	}
	for len(sigs) > 0 {
		if s := <-sigs; s == unix.SIGTERM || s == unix.SIGINT {
			return notRun(ExitNotRun, ReasonCancelled, fmt.Sprintf("not started: cancelled by %s", unix.SignalName(s.(syscall.Signal))))
		}
	}

	// Measure the progress file before the child can write to it.
	var progress progressWatch
	if spec.NoProgress > 0 {
		progress = newProgressWatch(spec.ProgressPath, time.Duration(spec.NoProgress))
	}
	started := time.Now()
	pid, err := startChild(dir, spec)
	if err != nil {
		st := notRun(ExitCannotRun, ReasonStartFailed, err.Error())
		var se *startError
		if errors.As(err, &se) {
			st.ExitCode = se.code
		}
		return st
	}
	exit := newExitWatch(pid)
	defer exit.close()
	w := &watch{spec: spec, pid: pid, started: started, progress: progress, exit: exit, dir: dir}
	child := w.identity()
	next := rec.rec
	next.Child = &child
	if err := rec.write(next, false); err != nil {
		// Without the child's identity nobody could find the child after
		// the shim is gone: do not let it run.
		w.stop(ReasonStartFailed, fmt.Sprintf("record the child's identity: %v", err))
		_ = SignalGroup(pid, unix.SIGKILL)
	}
	w.loop(sigs)

	// The child is a zombie now, which keeps its group id reserved:
	// kill what is left of the group, then reap.
	_ = SignalGroup(pid, unix.SIGKILL)
	ws := reap(pid)
	drainGroup(pid, sigs)
	privateProgress(spec.ProgressPath)
	st := Status{Reason: w.reason, Error: w.detail, StartedAt: started, EndedAt: time.Now()}
	switch {
	case w.reason == ReasonStartFailed:
		st.ExitCode = ExitCannotRun
	case ws.Signaled():
		st.ExitCode = SignalExit(ws.Signal())
		st.Signal = unix.SignalName(ws.Signal())
	default:
		st.ExitCode = ws.ExitStatus()
	}
	return st
}

// watch enforces an attempt's limits on its running child.
type watch struct {
	spec    Spec
	pid     int
	started time.Time

	reason, detail string
	kill           <-chan time.Time // SIGKILL once the grace is over
	progress       progressWatch
	exit           exitWatch
	// dir is the attempt directory; gaveUp says GiveUpFile is written.
	dir    string
	gaveUp bool
}

func (w *watch) identity() ProcInfo {
	p := ProcInfo{PID: w.pid, PGID: w.pid, StartedAt: w.started}
	p.StartTime, _ = StartTime(w.pid) // the child cannot be reaped yet
	return p
}

// loop returns once the child has exited, leaving it unreaped.
func (w *watch) loop(sigs <-chan os.Signal) {
	var timeout, deadline <-chan time.Time
	if w.spec.Timeout > 0 {
		t := time.NewTimer(time.Duration(w.spec.Timeout) - time.Since(w.started))
		defer t.Stop()
		timeout = t.C
	}
	if !w.spec.Deadline.IsZero() {
		t := time.NewTimer(time.Until(w.spec.Deadline))
		defer t.Stop()
		deadline = t.C
	}
	every := pollEvery
	if w.progress.limit > 0 {
		every = min(every, max(w.progress.limit/4, 10*time.Millisecond))
	}
	tick := time.NewTicker(every)
	defer tick.Stop()

	for !w.exit.exited() {
		select {
		case s := <-sigs:
			if s == unix.SIGTERM || s == unix.SIGINT {
				w.stop(ReasonCancelled, "cancelled by "+unix.SignalName(s.(syscall.Signal)))
			}
		case <-timeout:
			w.stop(ReasonTimeout, fmt.Sprintf("timed out after %s", time.Duration(w.spec.Timeout)))
		case <-deadline:
			w.stop(ReasonBudgetExceeded, fmt.Sprintf("max budget exceeded: the deadline %s passed",
				w.spec.Deadline.Format(time.RFC3339)))
		case now := <-tick.C:
			if w.progress.limit > 0 && w.progress.stalled(now) {
				w.noProgress()
			}
		case <-w.kill:
			_ = SignalGroup(w.pid, unix.SIGKILL)
		}
	}
}

// noProgress acts on a child whose no-progress budget ran out: it is
// stopped or, with KeepOnNoProgress, left running and the give-up
// recorded once in GiveUpFile.
func (w *watch) noProgress() {
	detail := fmt.Sprintf("no progress for %s", w.progress.limit)
	if !w.spec.KeepOnNoProgress {
		w.stop(ReasonNoProgress, detail)
		return
	}
	if w.gaveUp {
		return
	}
	path := filepath.Join(w.dir, GiveUpFile)
	w.gaveUp = WriteJSONAtomic(path, GiveUp{Reason: ReasonNoProgress, Detail: detail, At: time.Now()}) == nil
}

// stop ends the child for reason: SIGTERM to its group (with SIGCONT, so
// a stopped process sees it), SIGKILL after the grace. The first reason
// wins; a child that already exited keeps its own outcome.
func (w *watch) stop(reason, detail string) {
	if w.reason != "" || w.exit.exited() {
		return
	}
	w.reason, w.detail = reason, detail
	_ = SignalGroup(w.pid, unix.SIGTERM)
	_ = SignalGroup(w.pid, unix.SIGCONT)
	w.kill = time.After(time.Duration(w.spec.Grace))
}
