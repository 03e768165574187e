package runner

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runner/shim"
)

// attempt is one running attempt of a task that the runner follows.
type attempt struct {
	taskID string
	n      int
	dir    string
	// exited is closed when the shim is known to have recorded the
	// attempt's end or exited: for a shim this runner started, when its
	// ShimRun ends. A reattached one has none; supervise watches its
	// exit with shim.NotifyExit, and its liveness is checked through its
	// identity.
	exited <-chan struct{}
	// run is the shim this runner started for the attempt, nil for one
	// reattached.
	run *ShimRun

	cancelOnce sync.Once
	cancel     chan struct{}

	// progressNote says why the task's progress was not all read (its
	// progress file refused, or too much of it left at its end); the
	// task's end records it. Only the attempt's supervisor touches it.
	progressNote string
	// progressSize is the size of the progress file when a read found
	// nothing new in it, -1 when none did (see pumpProgress).
	progressSize int64
	// handedTo is the task the attempt's end handed its slot to, to be
	// launched once the attempt's shim is back in the pool (see
	// followOn); nil when none was. Only the attempt's supervisor
	// touches it.
	handedTo *handOff
}

// newAttempt returns attempt n of task taskID in dir, run by run, or by
// a shim found again after a restart when run is nil.
func newAttempt(taskID string, n int, dir string, run *ShimRun) *attempt {
	a := &attempt{taskID: taskID, n: n, dir: dir, run: run, exited: make(chan struct{}), cancel: make(chan struct{}), progressSize: -1}
	if run != nil {
		a.exited = run.Ended
	}
	return a
}

func (a *attempt) requestCancel() { a.cancelOnce.Do(func() { close(a.cancel) }) }

// handOver keeps h, a slot handed over by the attempt's end, if not nil.
func (a *attempt) handOver(h *handOff) {
	if h != nil {
		a.handedTo = h
	}
}

// alive reports whether the attempt's shim still runs; rec is the
// attempt's record as last read.
func (a *attempt) alive(rec shim.Record) bool {
	if a.run != nil {
		return !chanClosed(a.run.Exited)
	}
	return rec.Shim != nil && shim.Alive(*rec.Shim)
}

// supervise follows a until it settles: it records progress as the task
// writes it, forwards a cancel to the shim, and settles the task when the
// shim writes its status or dies without one. While the store fails to
// write (a full disk), it holds back with the rest of the runner and then
// tries again, so a task that ended meanwhile is settled once writes
// resume. It returns early, leaving the task running, when ctx ends; it
// reports whether the attempt is settled.
func (r *Runner) supervise(ctx context.Context, a *attempt) bool {
	endTurn := r.lookTurn(ctx, a)
	defer endTurn()
	tick := time.NewTicker(r.cfg.Poll)
	defer tick.Stop()
	s := supervision{cancel: a.cancel, exited: a.exited, watched: a.run != nil, notice: a.run != nil}
	defer func() {
		if s.unwatch != nil {
			s.unwatch()
		}
	}()
	if t, err := r.eng.GetTask(a.taskID); err == nil {
		if t.CancelRequested() {
			a.requestCancel()
		}
		// A task reattached after a restart has its processes recorded
		// already: no commit for them again.
		s.child = t.PID != 0 && t.Attempts == a.n
	}
	for ticked, first := false, true; ; first = false {
		if r.hold.Wait() == 0 && !(first && r.justLaunched(a, &s)) && r.step(ctx, a, &s, ticked) {
			return true
		}
		endTurn()
		// Set by the tick below for the next step only: a post statement
		// would clear it before that step ever saw it.
		ticked = false
		select {
		case <-ctx.Done():
			// Leaving the task to its shim: a cancel already asked for is
			// delivered first, so it does not wait for the next gateway.
			if s.stopping || chanClosed(s.cancel) {
				r.signalShim(a)
			}
			return false
		case <-s.exited:
			s.exited = nil // closed for good: the ticker paces what follows
		case <-tick.C:
			ticked = true
		case <-s.cancel:
			s.cancel, s.stopping = nil, true
		}
	}
}

// watchExit starts watching the shim that rec, the record of a, an
// attempt reattached after a restart, names, so that its exit wakes
// supervise at once rather than at the next poll (see shim.NotifyExit).
// Where the system gives no such notice, the poll paces the checks.
// Whether the shim still runs is still decided by its identity
// (attempt.alive): the notice only wakes supervise.
func (r *Runner) watchExit(a *attempt, rec shim.Record, s *supervision) {
	if rec.Shim == nil {
		return // not claimed yet: looked at again next step
	}
	s.watched = true
	exited, stop, err := shim.NotifyExit(*rec.Shim)
	if err != nil {
		r.log.Debug("no exit notice for a reattached shim; polling it", "task", a.taskID, "error", err)
		return
	}
	s.exited, s.unwatch, s.notice = exited, stop, true
}

// supervision is what supervise knows of its attempt between two steps.
type supervision struct {
	cancel   <-chan struct{} // nil once the cancel is handled
	exited   <-chan struct{} // nil once seen closed
	stopping bool            // a cancel was asked for and not yet delivered
	child    bool            // the child's identity is on the task
	gaveUp   bool            // a give-up of the shim is recorded
	watched  bool            // the shim's exit is watched (or cannot be)
	notice   bool            // exited is closed at the shim's end
	unwatch  func()          // stops the watch; nil when there is none
}

// justLaunched reports whether a is an attempt this runner has just
// handed to a pooled shim, whose record need not be read yet: the shim
// has at most claimed the attempt, its end wakes supervise at once
// (s.exited), and its child, once started, is recorded by the step the
// first tick brings, as it was when this read came before the fork, as
// it mostly did. Not reading it saves the gateway one record read a
// task, and a short task the commit of its processes
// (docs/performance.md).
func (r *Runner) justLaunched(a *attempt, s *supervision) bool {
	return a.run != nil && s.notice && s.exited != nil && !s.child && !chanClosed(s.exited)
}

// step does one round of supervise and reports whether the attempt is
// settled. One that could not be recorded (the store failed to write) is
// not: the next step, after the hold, tries again. A step the poll
// ticked (ticked) while the shim's end is watched (its exit, or the
// notice of its run) and its child recorded only reads progress: the
// shim records the status before its end wakes supervise, so the record
// need not be read until then. That keeps a gateway following a thousand
// tasks from reading a thousand records ten times a second.
func (r *Runner) step(ctx context.Context, a *attempt, s *supervision, ticked bool) bool {
	if s.stopping && r.signalShim(a) {
		s.stopping = false
	}
	if ticked && s.notice && s.child && s.exited != nil && !s.stopping {
		r.pumpProgress(a)
		if !s.gaveUp {
			s.gaveUp = r.giveUp(a, nil)
		}
		return false
	}
	// One read of the record serves the whole step.
	r.recordReads.Add(1)
	rec, err := shim.ReadRecord(a.dir)
	if err != nil {
		r.log.Warn("read the attempt record", "task", a.taskID, "error", err)
		return false
	}
	if !s.watched {
		r.watchExit(a, rec, s)
	}
	if !s.child && rec.Status == nil {
		// A task that ended already gets its end recorded, not its
		// processes: one commit fewer on a short task's path.
		s.child = r.recordChild(a, rec)
	}
	r.pumpProgress(a)
	if !s.gaveUp {
		s.gaveUp = r.giveUp(a, nil)
	}
	if rec.Status != nil {
		return r.settle(ctx, a, *rec.Status) && r.hold.Wait() == 0
	}
	if !a.alive(rec) {
		// The status may have landed between the two reads.
		if again, err := shim.ReadRecord(a.dir); err == nil && again.Status != nil {
			return r.settle(ctx, a, *again.Status) && r.hold.Wait() == 0
		}
		r.lose(a, "its shim exited without recording how the task ended")
		return r.hold.Wait() == 0
	}
	return false
}

// chanClosed reports whether c is closed; a nil c is not.
func chanClosed(c <-chan struct{}) bool {
	if c == nil {
		return false
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// recordChild puts the identities of the child and of its shim, once the
// shim has recorded the child's start in rec (the attempt's record), on
// the task (PID, PIDStartTime,
// ShimPID, ShimStartTime) in one commit, so the audit and maintenance can
// check the processes themselves. It reports whether there is nothing
// more to record.
func (r *Runner) recordChild(a *attempt, rec shim.Record) bool {
	if rec.Child == nil {
		return false // not started yet
	}
	in := engine.StartInput{PID: rec.Child.PID, PIDStartTime: rec.Child.StartTime}
	if rec.Shim != nil {
		in.ShimPID, in.ShimStartTime = rec.Shim.PID, rec.Shim.StartTime
	}
	if _, err := r.eng.SetProcess(a.taskID, a.n, in); r.hold.Observe(err) != nil {
		r.log.Debug("record the child process", "task", a.taskID, "error", err)
	}
	return true
}

// signalShim asks the shim to stop the task: SIGTERM to the group, then
// SIGKILL after the grace, done by the shim so that it happens even if the
// gateway dies meanwhile. The shim's identity is checked first. It reports
// whether the request is delivered, or needs none (the shim is gone).
//
// An attempt no shim has claimed yet is withdrawn instead (shim.Withdraw):
// its command never starts, and the next look settles the task as
// cancelled before it started. That holds even when the gateway stops
// at once, before the shim would have written its identity; a shim that
// claims first is signalled as usual.
func (r *Runner) signalShim(a *attempt) bool {
	rec, err := shim.ReadRecord(a.dir)
	if err == nil && rec.Shim == nil && rec.Status == nil {
		withdrawn, werr := shim.Withdraw(a.dir)
		if werr == nil && withdrawn {
			r.log.Info("task cancelled before its shim claimed it", "task", a.taskID)
			return true
		}
		rec, err = shim.ReadRecord(a.dir) // claimed meanwhile: signal it
	}
	if err != nil || rec.Shim == nil {
		r.log.Debug("cancel: shim identity not written yet", "task", a.taskID, "error", err)
		return false
	}
	info := *rec.Shim
	if err := shim.Signal(info, syscall.SIGTERM); err != nil {
		r.log.Warn("cancel: signal shim", "task", a.taskID, "error", err)
		return true
	}
	r.log.Info("task cancel sent", "task", a.taskID, "shim_pid", info.PID)
	return true
}

// pumpProgress records what the task appended to its progress file since
// the stored offset, up to one read's worth. It reports whether it
// recorded anything, in which case more may be waiting.
//
// A progress file that is not there, or has the size it had when a read
// found nothing new in it, has nothing to record: that is seen with one
// stat, without reading the task or the file.
func (r *Runner) pumpProgress(a *attempt) bool {
	path := r.progressPath(a.taskID)
	size := int64(-1)
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false
	case err == nil && fi.Mode().IsRegular():
		if fi.Size() == a.progressSize {
			return false
		}
		size = fi.Size()
	}
	t, err := r.eng.GetTask(a.taskID)
	if err != nil || t.Status.Terminal() {
		return false
	}
	in, err := readProgress(path, t.ProgressOffset)
	if errors.Is(err, shim.ErrNotRegular) {
		if a.progressNote == "" {
			r.log.Warn("progress refused", "task", a.taskID, "error", err)
			a.progressNote = "progress not read: " + err.Error()
		}
		return false
	}
	if err != nil {
		r.log.Warn("read progress", "task", a.taskID, "error", err)
		return false
	}
	if progressEmpty(in) {
		a.progressSize = size
		return false
	}
	a.progressSize = -1
	if _, err := r.eng.RecordProgress(a.taskID, in); r.hold.Observe(err) != nil {
		if !errors.Is(err, engine.ErrStaleProgress) {
			r.storeLog.Warn("record progress", "task", a.taskID, "error", err)
		}
		return false
	}
	return true
}
