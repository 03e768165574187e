package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/home"
	"github.com/flowgate/flowgate/host/lifecycle"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/host/throttle"
	"github.com/flowgate/flowgate/sdk"
)

// Runner starts queued tasks as supervised processes, follows them, and
// records how they end. Every task runs under a shim that owns the process,
// so a task outlives the runner: Stop leaves running tasks running, and the
// next Start reattaches to them.
type Runner struct {
	eng *engine.Engine
	cfg Config
	log hclog.Logger

	wake chan struct{}

	mu     sync.Mutex
	active map[string]*attempt // by task id
	// launching holds the tasks being launched, by id: they count
	// against MaxRunning until their launch returns (see dispatch).
	launching map[string]bool
	// reserved counts the slots taken for tasks being created running
	// (Reserve), until their write commits or fails.
	reserved int

	// holdMu guards held, the environment values of tasks that must
	// never be stored (see CreateHolding), by task id.
	holdMu sync.RWMutex
	held   map[string]map[string]string

	// life runs the dispatch loop and one goroutine per followed attempt.
	life lifecycle.Service
	// recordReads counts the attempt records supervise read (its tests
	// hold it to one a short task).
	recordReads atomic.Int64

	// hold backs dispatching and settling off while the store fails to
	// write (a full disk); storeLog throttles the lines about it.
	hold     throttle.Backoff
	storeLog *throttle.Log
	// files says whether the last attempt's files could be written.
	files *store.Health
	// unrecorded holds, by task id, how a launch that did not happen
	// was to be recorded (queued again, or failed) when the store could
	// not write it; the dispatch loop writes them once the hold is over.
	// Guarded by mu.
	unrecorded map[string]func() error

	// preview keeps recover to the engine's records: set by Preview, it
	// withdraws no launch and signals no process.
	preview bool
	// probe makes the next batch's first launch go alone, before the
	// others: at the start and after the store failed to write, so that
	// a store that still cannot write fails one launch's commit, not a
	// group of them that would take other parts' writes down with it.
	// Only the dispatch loop touches it.
	probe bool
	// once marks a runner that settles what ended and follows nothing
	// (Reconcile, Preview): it never waits for the network.
	once bool
	// dispatching is set once the dispatch loop starts: only then does a
	// task that ends hand its slot to a queued one (finishHandingOff);
	// recovery, Reconcile and Preview never start a task.
	dispatching atomic.Bool

	// classes classifies failed attempts.
	classes *Classifier
	// looks holds one slot per reattached attempt taking its first look
	// (see lookTurn).
	looks chan struct{}
}

// New returns a runner over eng. It fails on an invalid config.
func New(eng *engine.Engine, cfg Config) (*Runner, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	classes, err := NewClassifier(cfg.FailurePatterns)
	if err != nil {
		return nil, fmt.Errorf("runner config: %w", err)
	}
	return &Runner{
		eng: eng, cfg: cfg, log: cfg.Logger, classes: classes,
		wake:   make(chan struct{}, 1),
		active: map[string]*attempt{},

		launching: map[string]bool{},
		held:      map[string]map[string]string{},
		life:      lifecycle.Service{Name: "runner"},

		storeLog: &throttle.Log{Logger: cfg.Logger},
		files:    store.NewHealth(),

		unrecorded: map[string]func() error{},
		probe:      true,
		looks:      make(chan struct{}, recoverWorkers),
	}, nil
}

// Changed tells the runner about a committed change (it is an
// engine.Listener): a queued task wakes dispatch, a cancel request
// reaches the task's attempt. It never blocks.
func (r *Runner) Changed(c engine.Change) {
	switch c.Kind {
	case engine.TaskQueued:
		r.poke()
	case engine.TaskCancelRequested:
		r.mu.Lock()
		a := r.active[c.TaskID]
		r.mu.Unlock()
		if a != nil {
			a.requestCancel()
		}
	}
}

func (r *Runner) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Start reattaches to the tasks a previous runner left running, settles
// those that ended meanwhile, and starts dispatching queued tasks. If it
// cannot (the log directory cannot be made, the records cannot be read),
// it returns why and leaves the runner stopped. Calling Start on a started
// runner does nothing.
func (r *Runner) Start(ctx context.Context) error {
	return r.life.Start(ctx, func(ctx context.Context) error {
		if err := os.MkdirAll(filepath.Join(r.cfg.Home, home.LogsDir), 0o700); err != nil {
			return fmt.Errorf("create task log directory: %w", err)
		}
		if err := r.recover(ctx, true); err != nil {
			return err
		}
		r.poke()
		if r.cfg.Shims != nil {
			r.life.Go(r.cfg.Shims.KeepWarm)
		}
		// Set before Start returns, not when the loop's goroutine first
		// runs: a task created just after Start takes a free slot at its
		// creation (Reserve) as it would a moment later.
		r.dispatching.Store(true)
		r.life.Go(r.dispatchLoop)
		if r.cfg.Departures != nil && r.cfg.Cluster != nil {
			r.life.Go(r.takeOverLoop)
		}
		return nil
	})
}

// Stop stops dispatching and following tasks and waits for the runner's
// goroutines, or for ctx. Running tasks keep running under their shims.
// Calling Stop on a stopped runner does nothing.
func (r *Runner) Stop(ctx context.Context) error { return r.life.Stop(ctx) }

// Running returns how many tasks the runner follows now.
func (r *Runner) Running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.active)
}

// MaxRunning returns the admission cap.
func (r *Runner) MaxRunning() int { return r.cfg.MaxRunning }

// attemptDir is where attempt n of a task keeps its files.
func (r *Runner) attemptDir(taskID string, n int) string { return LogDir(r.cfg.Home, taskID, n) }

// progressPath is the task's progress file, shared by its attempts.
func (r *Runner) progressPath(taskID string) string {
	return filepath.Join(TaskDir(r.cfg.Home, taskID), ProgressFile)
}

// ProgressFile is the name of a task's progress file ($FLOWGATE_PROGRESS)
// in its TaskDir, shared by its attempts. It exists once the task wrote
// to it: no file means no progress yet.
const ProgressFile = "progress.jsonl"

// TaskDir returns the directory of task taskID's files under home dir:
// its first attempt's files and progress file, and a directory for each
// later attempt (see LogDir). Removing it removes all of them.
func TaskDir(dir, taskID string) string { return filepath.Join(dir, home.LogsDir, taskID) }

// LogDir returns the directory of attempt n of task taskID under home
// dir. The first attempt keeps its files in the TaskDir itself, so that
// starting a task makes one directory; attempt n > 1 keeps them in the
// TaskDir's subdirectory n. A gateway from before this layout put every
// attempt in a subdirectory, 1 included, and nothing in the TaskDir
// itself: when TaskDir/1 is a directory and the TaskDir holds no attempt
// record (shim.RecordFile), LogDir returns TaskDir/1 for attempt 1, so
// that such an attempt is still found, reattached and read. A directory
// 1 beside a record is the task's own (it may write there, beside its
// progress file), not an attempt.
func LogDir(dir, taskID string, n int) string {
	at := newLogDir(dir, taskID, n)
	if n > 1 {
		return at
	}
	sub := filepath.Join(at, "1")
	if fi, err := os.Stat(sub); err == nil && fi.IsDir() {
		if _, err := os.Stat(filepath.Join(at, shim.RecordFile)); errors.Is(err, fs.ErrNotExist) {
			return sub
		}
	}
	return at
}

// newLogDir is where this layout puts attempt n of task taskID: the
// TaskDir for the first, its subdirectory n for a later one. An attempt
// the runner starts now is always there (attempt numbers only grow, so
// none is of the older layout), which spares its launch LogDir's look.
func newLogDir(dir, taskID string, n int) string {
	if n > 1 {
		return filepath.Join(TaskDir(dir, taskID), strconv.Itoa(n))
	}
	return TaskDir(dir, taskID)
}

// launch starts the next attempt of a queued task: it records the attempt
// as running first, then starts the shim and hands it the spec, so a
// crash between the two is seen at the next start as an attempt that
// never ran (no shim claimed it).
func (r *Runner) launch(ctx context.Context, queued *stored.Task) {
	task, err := r.eng.StartTask(queued.ID, r.starting())
	if errors.Is(r.hold.Observe(err), store.ErrWriteFailed) {
		r.storeLog.Error("start task: the store cannot record it; it stays queued", "task", queued.ID, "error", err)
		return
	}
	if err != nil {
		r.log.Debug("task not started", "task", queued.ID, "error", err)
		return
	}
	r.launchStarted(ctx, queued, task)
}

// starting is what the runner records with the start of an attempt it
// launches: this gateway, and the boot its shim claims it in (empty
// when the system does not tell it, and the claim is synced).
func (r *Runner) starting() engine.StartInput {
	return engine.StartInput{Gateway: r.cfg.Member, Boot: shim.BootID()}
}

// launchStarted launches the attempt of task, started (recorded running)
// from queued: its files, its shim, and the supervision of both.
func (r *Runner) launchStarted(ctx context.Context, queued, task *stored.Task) {
	if a := r.startAttempt(ctx, queued, task); a != nil {
		r.follow(a)
	}
}

// startAttempt starts the attempt of task, started from queued: its
// files and its shim. It returns the attempt to follow, or nil when
// none started (its failure is recorded).
func (r *Runner) startAttempt(ctx context.Context, queued, task *stored.Task) *attempt {
	r.cfg.Observer.TaskStarted(task.StartedAt.Sub(runnableSince(queued)))
	n := task.Attempts
	why, err := r.eng.FlowHalted(task.FlowID)
	if err != nil || why != "" {
		r.finishFailed(task, n, "chain-halted", fmt.Sprintf("attempt %d: not started: %s", n, haltReason(why, err)))
		return nil
	}
	if task.Spec.Session != nil {
		if task, err = r.beginSession(ctx, task); err != nil {
			r.finishFailed(queued, n, "start-failed", fmt.Sprintf("attempt %d: record its session: %v", n, err))
			return nil
		}
	}
	dir := newLogDir(r.cfg.Home, task.ID, n)
	spec := r.specFor(task)
	if task.Spec.Session != nil {
		spec.Env, err = r.sessionEnv(task, spec.Env)
	}
	if err == nil {
		err = makeAttemptDir(dir)
	}
	if err == nil {
		err = shim.Prepare(dir)
	}
	if err == nil && task.Spec.Input != "" {
		spec.StdinPath = filepath.Join(dir, "stdin")
		err = writeNew(spec.StdinPath, []byte(task.Spec.Input))
	}
	var handoff string
	if err == nil {
		handoff, err = shim.SpecEntry(spec)
	}
	if err == nil || store.DiskFull(err) {
		r.files.Record(err)
	}
	if store.DiskFull(err) {
		// Not the task's fault: it runs once the disk has room again. The
		// hold starts after the requeue, whose success would clear it.
		r.storeLog.Error("start task: no space left for its files; it is queued again", "task", task.ID, "dir", dir, "error", err)
		r.record(task.ID, func() error { return r.requeueUnstarted(task, "no space was left on the disk for its files") })
		r.hold.Fail()
		return nil
	}
	if err != nil {
		r.finishFailed(task, n, "start-failed", fmt.Sprintf("attempt %d: prepare %s: %v", n, dir, err))
		return nil
	}
	env, err := r.shimEnv(task)
	if err != nil {
		r.finishFailed(task, n, "start-failed", fmt.Sprintf("attempt %d: %v", n, err))
		return nil
	}
	run, err := r.startShim(dir, append(env, handoff))
	if err != nil {
		r.finishFailed(task, n, "start-failed", fmt.Sprintf("attempt %d: start the shim: %v", n, err))
		return nil
	}
	r.log.Info("task started", "task", task.ID, "attempt", n, "shim_pid", run.Process.Pid, "shim_reused", run.Reused)
	return newAttempt(task.ID, n, dir, run)
}

// startShim starts the shim of attempt dir, or hands the attempt to an
// idle one of Shims (see Shims.Start).
func (r *Runner) startShim(dir string, env []string) (*ShimRun, error) {
	if r.cfg.Shims != nil {
		return r.cfg.Shims.Start(dir, env)
	}
	p, err := r.cfg.Launch(dir, env)
	if err != nil {
		return nil, err
	}
	return ownRun(p), nil
}

// makeAttemptDir makes attempt directory dir. Its parent (the logs
// directory, or the task's own for a later attempt) is there but in a
// home whose files were removed under the gateway, so one mkdir is
// tried first: MkdirAll's look at the path and at its parent costs two
// stats on every task's start (docs/performance.md). A dir already there
// is taken as it is; shim.Prepare then refuses one holding a record.
func makeAttemptDir(dir string) error {
	err := os.Mkdir(dir, 0o700)
	switch {
	case err == nil || errors.Is(err, fs.ErrExist):
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return os.MkdirAll(dir, 0o700)
	}
	return err
}

// writeNew writes b to a new file at path, mode 0600. A file already
// there is refused, never followed or opened: a later attempt's
// directory is in the task's own, where an earlier attempt may have put
// a named pipe or a link by that name.
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// specFor builds the shim's spec for the attempt now starting.
func (r *Runner) specFor(task *stored.Task) shim.Spec {
	s := task.Spec
	spec := shim.Spec{
		TaskID: task.ID, FlowID: task.FlowID, Attempt: task.Attempts,
		Argv: s.Argv, Shell: s.Shell, Env: s.Env, Cwd: s.Cwd, StdinPath: s.Stdin,
		ProgressPath: r.progressPath(task.ID),
		Timeout:      s.Timeout, NoProgress: s.NoProgressBudget, Grace: sdk.Duration(r.cfg.Grace),
		KeepOnNoProgress: s.OnNoProgress == sdk.NoProgressKeep,
		Boot:             task.Boot,
	}
	if s.MaxBudget > 0 {
		spec.Deadline = task.StartedAt.Add(time.Duration(s.MaxBudget))
	}
	return spec
}

// follow registers a and supervises it until it settles or the runner
// stops. A runner that is stopping follows nothing new: the task keeps
// running under its shim, and the next Start reattaches to it. The shim
// of a settled attempt goes back to the pool of Shims, the end of its
// attempt recorded, so the next attempt it is handed never overlaps it.
func (r *Runner) follow(a *attempt) {
	r.mu.Lock()
	r.active[a.taskID] = a
	r.mu.Unlock()
	followed := r.life.Go(func(ctx context.Context) { r.followOn(ctx, a) })
	if !followed {
		r.forget(a)
		// A cancel already asked for is delivered before the task is
		// left to its shim, as supervise does when the runner stops.
		if chanClosed(a.cancel) || r.cancelAsked(a) {
			r.signalShim(a)
		}
		r.release(a, false)
	}
}

// cancelAsked reports whether the store holds a cancel request for a's
// attempt, one that came before a was registered to hear of it.
func (r *Runner) cancelAsked(a *attempt) bool {
	t, err := r.eng.GetTask(a.taskID)
	return err == nil && t.CancelRequested() && t.Attempts == a.n
}

// followOn supervises a until it settles and hands its shim back; then,
// when a's end handed its slot to a queued task (finishHandingOff), it
// launches that task and follows its attempt in turn, in the same
// goroutine. A chain of hand-overs so runs on one goroutine whose stack
// has grown to what supervising and settling take, instead of a new
// goroutine per launch and per attempt, each growing its stack anew
// (docs/performance.md); and the shim just handed back is in the pool
// when the launch asks for one.
func (r *Runner) followOn(ctx context.Context, a *attempt) {
	for a != nil {
		settled := r.supervise(ctx, a)
		r.forget(a)
		r.release(a, settled)
		r.poke()
		if a.handedTo == nil {
			return
		}
		a = r.launchHandedOff(ctx, a.handedTo)
	}
}

// release hands the shim this runner started for a back to Shims:
// settled says the attempt's end is recorded.
func (r *Runner) release(a *attempt, settled bool) {
	if a.run != nil && r.cfg.Shims != nil {
		r.cfg.Shims.Done(a.run, settled)
	}
}

// forget drops a from the attempts the runner follows.
func (r *Runner) forget(a *attempt) {
	r.mu.Lock()
	delete(r.active, a.taskID)
	r.mu.Unlock()
}

func (r *Runner) finishFailed(task *stored.Task, n int, reason, msg string) {
	r.log.Error("task failed to start", "task", task.ID, "error", msg)
	r.record(task.ID, func() error {
		_, err := r.eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskFailed, Attempt: n, Reason: reason, Error: msg})
		if r.hold.Observe(err) != nil {
			r.storeLog.Error("record start failure", "task", task.ID, "error", err)
		}
		return err
	})
}
