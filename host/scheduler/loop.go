package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// Defaults for Config.
const (
	DefaultTick       = time.Second
	DefaultHistoryMax = 2000
	DefaultHistoryAge = 7 * 24 * time.Hour
)

// cronRuntime is the runtime of the tasks the Scheduler creates.
const cronRuntime = "cron"

// Config tunes a Scheduler. The zero value is ready to use.
type Config struct {
	// Now returns the current time. Nil means time.Now. The loop reads it
	// afresh on every tick, so suspends and clock jumps are seen at the
	// next tick.
	Now func() time.Time
	// Tick is how often the loop looks for due jobs and ended runs. Zero
	// means DefaultTick.
	Tick time.Duration
	// HistoryMax and HistoryAge bound each job's run history: ended runs
	// beyond the newest HistoryMax, or scheduled more than HistoryAge ago,
	// are pruned. Zero means the defaults.
	HistoryMax int
	HistoryAge time.Duration
	// SessionsDir holds one directory per named session
	// ("session:NAME"), passed to its runs as FLOWGATE_SESSION_DIR so that
	// each run can build on the last. Empty means none.
	SessionsDir string
	// DeliveryTimeout bounds one delivery attempt; zero means
	// DefaultDeliveryTimeout. DeliveryAttempts is how many times a
	// delivery is tried in all; zero means DefaultDeliveryAttempts.
	DeliveryTimeout  time.Duration
	DeliveryAttempts int
	// Logger receives tick errors. Nil discards them.
	Logger hclog.Logger
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Tick <= 0 {
		c.Tick = DefaultTick
	}
	if c.HistoryMax <= 0 {
		c.HistoryMax = DefaultHistoryMax
	}
	if c.HistoryAge <= 0 {
		c.HistoryAge = DefaultHistoryAge
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	if c.DeliveryAttempts <= 0 {
		c.DeliveryAttempts = DefaultDeliveryAttempts
	}
	return c
}

// Scheduler fires due jobs as engine tasks (command jobs) or pipeline flows
// (pipeline jobs), applies the overlap policy, records every scheduled time
// in the run history, and tracks how runs end. See the package doc.
type Scheduler struct {
	eng  *engine.Engine
	jobs *Jobs
	cfg  Config

	mu   sync.Mutex    // serializes ticks
	wake chan struct{} // something was queued for delivery

	life    sync.Mutex
	started bool
	cancel  context.CancelFunc
	done    chan struct{}
}

// New returns a Scheduler that keeps its records, and creates its runs'
// work, through eng; nothing runs until Start.
func New(eng *engine.Engine, cfg Config) *Scheduler {
	cfg = cfg.WithDefaults()
	return &Scheduler{eng: eng, cfg: cfg, jobs: NewJobs(eng, JobsConfig{Now: cfg.Now}), wake: make(chan struct{}, 1)}
}

// Jobs returns the job store the Scheduler reads.
func (s *Scheduler) Jobs() *Jobs { return s.jobs }

// Start rebuilds the indexes (Reindex), then runs the loop until Stop: a
// tick at once, then one every Tick. Calling Start on a started Scheduler
// does nothing.
func (s *Scheduler) Start(ctx context.Context) error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.started {
		return nil
	}
	if err := s.Reindex(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.started, s.cancel, s.done = true, cancel, make(chan struct{})
	go s.loop(ctx, s.done)
	return nil
}

// Stop ends the loop and waits for the tick in progress, or for ctx.
// Runs already started keep running; the next Start follows them again.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.life.Lock()
	defer s.life.Unlock()
	if !s.started {
		return nil
	}
	s.started = false
	s.cancel()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("scheduler stop: %w", ctx.Err())
	}
}

// Reindex rebuilds the due index and the index of jobs with open runs from
// the job and runtime records, in one transaction. Every write keeps them
// in step; Start calls this once so that a store written by an older
// flowgate, or repaired by hand, is read right. It takes time linear in
// the jobs.
func (s *Scheduler) Reindex() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		var stale []string
		for _, p := range []string{duePrefix, openPrefix} {
			if err := tx.Scan(p, store.ScanOptions{}, func(it store.Item) bool {
				stale = append(stale, it.Key)
				return true
			}); err != nil {
				return err
			}
		}
		for _, k := range stale {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
		var (
			due, open []string
			bad       error
		)
		if err := tx.Scan(jobPrefix, store.ScanOptions{}, func(it store.Item) bool {
			var j Job
			if bad = json.Unmarshal(it.Value, &j); bad != nil {
				bad = fmt.Errorf("read %s: %w", it.Key, bad)
				return false
			}
			if k := dueKey(j); k != "" {
				due = append(due, k)
			}
			return true
		}); err != nil || bad != nil {
			return errors.Join(err, bad)
		}
		if err := tx.Scan(schedPrefix, store.ScanOptions{}, func(it store.Item) bool {
			var r schedRecord
			if bad = json.Unmarshal(it.Value, &r); bad != nil {
				bad = fmt.Errorf("read %s: %w", it.Key, bad)
				return false
			}
			if r.open() {
				open = append(open, openKey(it.Key[len(schedPrefix):]))
			}
			return true
		}); err != nil || bad != nil {
			return errors.Join(err, bad)
		}
		for _, k := range append(due, open...) {
			if err := tx.Put(k, []byte{}); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Scheduler) loop(ctx context.Context, done chan struct{}) {
	var deliveries sync.WaitGroup
	deliveries.Go(func() { s.deliverLoop(ctx) })
	defer close(done)
	defer deliveries.Wait()
	t := time.NewTicker(s.cfg.Tick)
	defer t.Stop()
	for {
		if err := s.safeTick(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Error("scheduler tick", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// safeTick is TickOnce with a panic turned into an error, so one bad job
// or record never stops the loop silently.
func (s *Scheduler) safeTick(ctx context.Context) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tick panicked: %v", p)
		}
	}()
	return s.TickOnce(ctx)
}

// TickOnce does one pass at the current time: it settles ended runs,
// starts buffered runs whose turn has come, and fires the jobs due. The
// loop calls it every Tick; tests call it directly.
func (s *Scheduler) TickOnce(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	open, err := s.scanIDs(openPrefix, "")
	if err != nil {
		return err
	}
	for _, id := range open {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		errs = append(errs, s.settle(id))
	}
	now := s.cfg.Now()
	due, err := s.scanIDs(duePrefix, fmt.Sprintf("%s%020d/~", duePrefix, now.UnixNano()))
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, id := range due {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		j, err := s.jobs.Get(id)
		if errors.Is(err, ErrJobNotFound) {
			continue // removed since the scan
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !j.Enabled || j.State.NextRun.IsZero() || j.State.NextRun.After(now) {
			continue
		}
		if err := s.fire(j, now); err != nil {
			errs = append(errs, fmt.Errorf("job %s (%s): %w", j.ID, j.Name, err))
		}
	}
	return errors.Join(errs...)
}

// scanIDs returns the job ids of an index, in key order: the last path
// element of each key under prefix, up to (not including) keys from
// upTo on; an empty upTo means all.
func (s *Scheduler) scanIDs(prefix, upTo string) ([]string, error) {
	var ids []string
	err := s.eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) error {
		ids = ids[:0]
		return tx.Scan(prefix, store.ScanOptions{}, func(it store.Item) bool {
			if upTo != "" && it.Key >= upTo {
				return false
			}
			ids = append(ids, it.Key[strings.LastIndexByte(it.Key, '/')+1:])
			return true
		})
	})
	return ids, err
}

// nextRunAfter is when job fires next once now is handled: the first
// scheduled time after now and after rec.LastScheduled, and, after
// failures of a recurring job, not before the last failure plus
// FailureBackoff.
func (s *Scheduler) nextRunAfter(j Job, rec schedRecord, now time.Time) time.Time {
	if !j.Enabled {
		return time.Time{}
	}
	after := now
	if rec.LastScheduled.After(after) {
		after = rec.LastScheduled
	}
	if n := j.State.ConsecutiveErrors; n > 0 && j.Schedule.Kind != schedule.KindAt && !rec.LastFailure.IsZero() {
		if b := rec.LastFailure.Add(schedule.FailureBackoff(n) - time.Nanosecond); b.After(after) {
			after = b
		}
	}
	return s.jobs.scheduleOf(j).Next(after)
}

// fire handles a due job: it records the missed times, then claims and
// starts (or skips, or buffers) each time to run.
func (s *Scheduler) fire(j Job, now time.Time) error {
	var rec schedRecord
	if err := s.eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) (err error) { rec, err = loadSched(tx, j.ID); return err }); err != nil {
		return err
	}
	base := j.State.NextRun.Add(-time.Nanosecond)
	if rec.LastScheduled.After(base) {
		base = rec.LastScheduled
	}
	run, missed := schedule.PlanCatchUp(s.jobs.scheduleOf(j), base, now, time.Duration(j.CatchUpWindow))
	if err := s.recordMissed(j.ID, missed, now); err != nil {
		return err
	}
	for _, t := range run {
		if _, _, err := s.claim(j.ID, t, now, claimOpts{trigger: TriggerSchedule}); err != nil {
			return err
		}
	}
	// Nothing was due after all (the due time lay in a backoff or the
	// schedule changed): move NextRun on so the job is not due every tick.
	if len(run) == 0 && len(missed) == 0 {
		return s.eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
			cur, err := find(tx, j.ID)
			if err != nil {
				return nil
			}
			rec, err := loadSched(tx, j.ID)
			if err != nil {
				return err
			}
			cur.State.NextRun = s.nextRunAfter(cur, rec, now)
			return putJob(tx, cur)
		})
	}
	return nil
}

// putJob writes j with its due index entry.
func putJob(tx engine.RecordTx, j Job) error { return applyOps(tx, putOps(tx, j)) }

// recordMissed writes a "missed" record for each of times (at most the
// newest HistoryMax) and moves LastScheduled past them.
func (s *Scheduler) recordMissed(jobID string, times []time.Time, now time.Time) error {
	if len(times) == 0 {
		return nil
	}
	if len(times) > s.cfg.HistoryMax {
		s.cfg.Logger.Warn("scheduler: many missed runs; recording the newest", "job", jobID, "missed", len(times), "recorded", s.cfg.HistoryMax)
		times = times[len(times)-s.cfg.HistoryMax:]
	}
	return s.eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		rec, err := loadSched(tx, jobID)
		if err != nil {
			return err
		}
		var session string
		if j, err := find(tx, jobID); err == nil {
			session = j.Session
		}
		for _, t := range times {
			if _, ok, err := loadRun(tx, jobID, t); err != nil || ok {
				if err != nil {
					return err
				}
				continue
			}
			missed := Run{ID: RunID(jobID, t), JobID: jobID, Scheduled: t.UTC(), Trigger: TriggerSchedule, Status: RunMissed, EndedAt: now.UTC(), Session: session}
			if err := putJSON(tx, runKey(jobID, t), missed); err != nil {
				return err
			}
		}
		if last := times[len(times)-1]; last.After(rec.LastScheduled) {
			rec.LastScheduled = last
		}
		if err := putSched(tx, jobID, rec); err != nil {
			return err
		}
		return pruneRuns(tx, jobID, s.cfg.HistoryMax, now.Add(-s.cfg.HistoryAge))
	})
}

// claimOpts says who asked for a run and how: the schedule (the loop), a
// person (RunNow) or a backfill, and the overlap policy to apply.
type claimOpts struct {
	trigger string
	// overlap overrides the job's policy when set (a backfill may).
	overlap schedule.Overlap
}

// claim handles one time t of a job in one transaction: it refuses a time
// that already has a record (so a time never runs twice, across
// restarts), applies the overlap policy, writes the run record, and, for a
// scheduled time, moves the job's LastScheduled and NextRun on. Then,
// outside the transaction, it cancels what cancel_other displaces and
// creates the work of a started run. It returns the run as recorded; ok is
// false when t already had a record or the job is gone or disabled.
func (s *Scheduler) claim(jobID string, t time.Time, now time.Time, o claimOpts) (run Run, ok bool, err error) {
	var (
		action   schedule.Action
		toCancel []Run
	)
	err = s.eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		action, ok, toCancel = 0, false, nil
		rec, err := loadSched(tx, jobID)
		if err != nil {
			return err
		}
		if _, had, err := loadRun(tx, jobID, t); err != nil || had {
			return err // handled before: never twice
		}
		j, err := find(tx, jobID)
		if err != nil || !j.Enabled {
			return nil // removed or disabled since listed
		}
		overlap := j.Overlap
		if o.overlap != "" {
			overlap = o.overlap
		}
		action = schedule.Decide(overlap, len(rec.Active) > 0, len(rec.Buffered))
		run = Run{ID: RunID(jobID, t), JobID: jobID, Scheduled: t.UTC(), Trigger: o.trigger, Session: j.Session}
		switch action {
		case schedule.ActionStart:
			run.Status = RunStarting
			rec.Active = append(rec.Active, t)
			j.State.LastRun = t
		case schedule.ActionSkip:
			run.Status, run.EndedAt = RunSkipped, now.UTC()
			run.Error = fmt.Sprintf("overlap %s: a run of the job is still active", overlap)
		case schedule.ActionBuffer:
			run.Status = RunBuffered
			rec.Buffered = append(rec.Buffered, t)
		case schedule.ActionCancelThenStart:
			// The newest time replaces any already waiting.
			for _, b := range rec.Buffered {
				if old, ok, err := loadRun(tx, jobID, b); err == nil && ok {
					old.Status, old.EndedAt = RunSkipped, now.UTC()
					old.Error = "overlap cancel_other: replaced by a newer run"
					if err := putJSON(tx, runKey(jobID, b), old); err != nil {
						return err
					}
				}
			}
			run.Status, rec.Buffered = RunBuffered, []time.Time{t}
			for _, a := range rec.Active {
				if ar, ok, err := loadRun(tx, jobID, a); err == nil && ok {
					toCancel = append(toCancel, ar)
				}
			}
		}
		if o.trigger == TriggerSchedule {
			if t.After(rec.LastScheduled) {
				rec.LastScheduled = t
			}
			j.State.NextRun = s.nextRunAfter(j, rec, now)
		}
		if err := putJSON(tx, runKey(jobID, t), run); err != nil {
			return err
		}
		if err := putSched(tx, jobID, rec); err != nil {
			return err
		}
		if err := putJob(tx, j); err != nil {
			return err
		}
		ok = true
		return pruneRuns(tx, jobID, s.cfg.HistoryMax, now.Add(-s.cfg.HistoryAge))
	})
	if err != nil || !ok {
		return run, ok, err
	}
	for _, r := range toCancel {
		s.cancelRun(r)
	}
	if action == schedule.ActionStart {
		if err := s.startWork(jobID, t, false); err != nil {
			return run, ok, err
		}
		if r, found, err := s.loadRun(jobID, t); err == nil && found {
			run = r
		}
	}
	return run, ok, nil
}

// loadRun reads one run record in its own transaction.
func (s *Scheduler) loadRun(jobID string, t time.Time) (r Run, ok bool, err error) {
	err = s.eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) error { r, ok, err = loadRun(tx, jobID, t); return err })
	return r, ok, err
}

// RunNow starts a run of the job with id or name ref at once, whether or
// not it is due, as `cron run` does. The run obeys the job's overlap
// policy (it may be skipped or buffered) and does not move the schedule.
// A disabled job is refused: enable it first. The returned run has its
// task or flow id when it started.
func (s *Scheduler) RunNow(ref string) (Run, error) {
	j, err := s.jobs.Get(ref)
	if err != nil {
		return Run{}, err
	}
	if !j.Enabled {
		return Run{}, fmt.Errorf("%w: job %s (%s) is disabled; enable it first with flowgate cron enable %s", sdk.ErrInvalid, j.ID, j.Name, j.ID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.cfg.Now()
	// Two runs asked for in the same nanosecond (or at a scheduled time
	// already recorded) get the next free instant.
	for range 1000 {
		r, ok, err := s.claim(j.ID, now, now, claimOpts{trigger: TriggerManual})
		if err != nil || ok {
			return r, err
		}
		if _, err := s.jobs.Get(j.ID); err != nil {
			return Run{}, err
		}
		now = now.Add(time.Nanosecond)
	}
	return Run{}, fmt.Errorf("job %s: no free instant to record a run at", j.ID)
}

// BackfillOptions bound a backfill.
type BackfillOptions struct {
	// From and To bound the scheduled times run: those in (From, To]. To
	// must not be in the future.
	From, To time.Time
	// DryRun lists the times without running anything.
	DryRun bool
	// Overlap, if set, replaces the job's overlap policy for the backfill
	// (buffer_all runs every time one after another; allow_all runs them
	// side by side).
	Overlap schedule.Overlap
}

// Backfill runs the scheduled times of the job with id or name ref that
// fall in (From, To], oldest first, each claimed as the loop would claim it
// (a time already in the history is left alone, so it never runs twice)
// and subject to the overlap policy. It returns one run per time: as
// recorded, or for DryRun, as it would be recorded (status "planned", or
// the status a time already in the history has).
func (s *Scheduler) Backfill(ref string, o BackfillOptions) ([]Run, error) {
	j, err := s.jobs.Get(ref)
	if err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	switch {
	case o.From.IsZero() || o.To.IsZero():
		return nil, flagErr("--from", "both --from and --to are required")
	case !o.To.After(o.From):
		return nil, flagErr("--to", fmt.Sprintf("%s is not after --from %s", o.To.UTC().Format(time.RFC3339), o.From.UTC().Format(time.RFC3339)))
	case o.To.After(now):
		return nil, flagErr("--to", fmt.Sprintf("%s is in the future; a backfill runs past times only (the schedule runs the rest)", o.To.UTC().Format(time.RFC3339)))
	case !j.Enabled && !o.DryRun:
		return nil, fmt.Errorf("%w: job %s (%s) is disabled; enable it first with flowgate cron enable %s", sdk.ErrInvalid, j.ID, j.Name, j.ID)
	}
	times, err := s.jobs.scheduleOf(j).Between(o.From, o.To)
	if errors.Is(err, schedule.ErrTooManyTimes) {
		return nil, flagErr("--from", fmt.Sprintf("the range holds more than %d scheduled times; narrow it", schedule.MaxTimes))
	}
	if err != nil {
		return nil, err
	}
	out := make([]Run, 0, len(times))
	if o.DryRun {
		for _, t := range times {
			r, ok, err := s.loadRun(j.ID, t)
			if err != nil {
				return nil, err
			}
			if !ok {
				r = Run{ID: RunID(j.ID, t), JobID: j.ID, Scheduled: t.UTC(), Status: RunPlanned, Trigger: TriggerBackfill, Session: j.Session}
			}
			out = append(out, r)
		}
		return out, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range times {
		r, ok, err := s.claim(j.ID, t, s.cfg.Now(), claimOpts{trigger: TriggerBackfill, overlap: o.Overlap})
		if err != nil {
			return out, err
		}
		if !ok {
			var found bool
			if r, found, err = s.loadRun(j.ID, t); err != nil {
				return out, err
			}
			if !found { // the job went away mid-backfill
				return out, fmt.Errorf("%w: job %s was removed or disabled during the backfill", ErrJobNotFound, j.ID)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// cancelRun asks the engine to cancel a run's work. A run already ended is
// fine: the next tick settles it either way.
func (s *Scheduler) cancelRun(r Run) {
	var err error
	switch {
	case r.TaskID != "":
		_, err = s.eng.CancelTask(r.TaskID)
	case r.FlowID != "":
		_, err = s.eng.CancelFlow(r.FlowID)
	}
	if err != nil && !errors.Is(err, sdk.ErrTerminal) {
		s.cfg.Logger.Warn("scheduler: cancel_other could not cancel the active run", "job", r.JobID, "scheduled", r.Scheduled, "error", err)
	}
}

// ownerKey is the owner of every task and flow a job creates.
func ownerKey(jobID string) string { return "cron:" + jobID }

// startWork creates the task or flow of a "starting" run and records its
// id. A command task carries an idempotency key, so redoing this after a
// crash returns the same task. A flow has no idempotency key; it carries
// the same key as its Origin instead, and a redo first looks for a flow of
// the job's owner with that origin.
func (s *Scheduler) startWork(jobID string, t time.Time, redo bool) error {
	run, ok, err := s.loadRun(jobID, t)
	if err != nil || !ok {
		return err
	}
	if run.Status != RunStarting {
		return nil
	}
	j, err := s.jobs.Get(jobID)
	if errors.Is(err, ErrJobNotFound) {
		return s.finish(jobID, t, RunError, "the job was removed before its run started", s.cfg.Now())
	}
	if err != nil {
		return err
	}
	key := RunID(jobID, t)
	env, err := s.runEnv(j, run)
	if err != nil {
		return s.finish(jobID, t, RunError, err.Error(), s.cfg.Now())
	}
	var taskID, flowID string
	switch j.Payload.Kind {
	case PayloadCommand:
		task, _, err := s.eng.CreateTask(engine.CreateTaskInput{
			Runtime: cronRuntime, Label: j.Name, OwnerKey: ownerKey(jobID),
			Spec: sdk.TaskSpec{Shell: j.Payload.Command, Env: env}, IdempotencyKey: key,
		})
		if err != nil {
			return s.finish(jobID, t, RunError, "create task: "+err.Error(), s.cfg.Now())
		}
		taskID = task.ID
	case PayloadPipeline:
		f, err := s.pipelineFlow(j, key, env, redo)
		if err != nil {
			return s.finish(jobID, t, RunError, "create pipeline flow: "+err.Error(), s.cfg.Now())
		}
		flowID = f.ID
	default:
		return s.finish(jobID, t, RunError, fmt.Sprintf("unknown payload kind %q", j.Payload.Kind), s.cfg.Now())
	}
	now := s.cfg.Now()
	return s.eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		r, ok, err := loadRun(tx, jobID, t)
		if err != nil || !ok || r.Status != RunStarting {
			return err
		}
		r.Status, r.TaskID, r.FlowID, r.StartedAt = RunRunning, taskID, flowID, now.UTC()
		return putJSON(tx, runKey(jobID, t), r)
	})
}

// runEnv is the environment a run's work gets: who it is
// (FLOWGATE_CRON_JOB_ID, _JOB_NAME, _RUN_ID, _SCHEDULED, _TRIGGER) and its
// session. FLOWGATE_SESSION is the session's name for "session:NAME", with
// FLOWGATE_SESSION_DIR a directory kept across runs (when the Scheduler
// has a SessionsDir), and the run's id for an isolated run.
func (s *Scheduler) runEnv(j Job, r Run) (map[string]string, error) {
	trigger := r.Trigger
	if trigger == "" {
		trigger = TriggerSchedule
	}
	env := map[string]string{
		"FLOWGATE_CRON_JOB_ID":    j.ID,
		"FLOWGATE_CRON_JOB_NAME":  j.Name,
		"FLOWGATE_CRON_RUN_ID":    RunID(j.ID, r.Scheduled),
		"FLOWGATE_CRON_SCHEDULED": r.Scheduled.UTC().Format(time.RFC3339Nano),
		"FLOWGATE_CRON_TRIGGER":   trigger,
		"FLOWGATE_SESSION":        RunID(j.ID, r.Scheduled),
	}
	name, named := strings.CutPrefix(j.Session, "session:")
	if !named {
		return env, nil
	}
	env["FLOWGATE_SESSION"] = name
	if s.cfg.SessionsDir != "" {
		dir := filepath.Join(s.cfg.SessionsDir, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("session %s: %w", name, err)
		}
		env["FLOWGATE_SESSION_DIR"] = dir
	}
	return env, nil
}

// pipelineFlow returns the flow of a pipeline run: when redoing a start
// that a crash interrupted, the flow that attempt may have made (found by
// owner and origin, reading every flow of the job); else a new one. A
// first attempt cannot have made one, so it reads nothing.
func (s *Scheduler) pipelineFlow(j Job, origin string, env map[string]string, redo bool) (*sdk.Flow, error) {
	for f := (engine.FlowFilter{OwnerKey: ownerKey(j.ID), Limit: 100}); redo; {
		page, err := s.eng.ListFlows(f)
		if err != nil {
			return nil, err
		}
		for _, fl := range page.Flows {
			if fl.Origin == origin {
				return fl, nil
			}
		}
		if page.Next == "" {
			break
		}
		f.After = page.Next
	}
	state, err := flows.Invocation{File: j.Payload.Pipeline, Args: j.Payload.Args, Cwd: filepath.Dir(j.Payload.Pipeline), Env: env}.State()
	if err != nil {
		return nil, err
	}
	return s.eng.CreateFlow(engine.CreateFlowInput{
		ControllerID: flows.PipelineController, OwnerKey: ownerKey(j.ID), Goal: j.Name, State: state, Origin: origin,
	})
}

// settle follows a job's open runs: it starts runs left "starting" (a
// crash between claim and create), records the end of runs whose task or
// flow ended, and starts the next buffered run when none is active.
func (s *Scheduler) settle(jobID string) error {
	var rec schedRecord
	if err := s.eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) (err error) { rec, err = loadSched(tx, jobID); return err }); err != nil {
		return err
	}
	if !rec.open() {
		// Nothing to follow (a stale index entry): putSched drops it, and the
		// record of a job removed since.
		return s.eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
			cur, err := loadSched(tx, jobID)
			if err != nil || cur.open() {
				return err
			}
			return putSched(tx, jobID, cur)
		})
	}
	var errs []error
	for _, t := range rec.Active {
		run, ok, err := s.loadRun(jobID, t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		switch {
		case !ok || !runOpen(run.Status):
			errs = append(errs, s.finish(jobID, t, "", "", s.cfg.Now()))
		case run.Status == RunStarting:
			errs = append(errs, s.startWork(jobID, t, true))
		default:
			if status, msg, ended := s.outcome(run); ended {
				errs = append(errs, s.finish(jobID, t, status, msg, s.cfg.Now()))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	next, err := s.promote(jobID)
	if err != nil || next.IsZero() {
		return err
	}
	return s.startWork(jobID, next, false)
}

// outcome reports whether a running run's work has ended, and how.
func (s *Scheduler) outcome(r Run) (status, msg string, ended bool) {
	switch {
	case r.TaskID != "":
		task, err := s.eng.GetTask(r.TaskID)
		if errors.Is(err, sdk.ErrNotFound) {
			return RunError, "task " + r.TaskID + " is gone", true
		}
		if err != nil || task.Status.Active() {
			return "", "", false
		}
		msg := "task " + string(task.Status)
		if n := len(task.Errors); n > 0 {
			msg += ": " + task.Errors[n-1]
		}
		switch task.Status {
		case sdk.TaskSucceeded:
			return RunOK, "", true
		case sdk.TaskCancelled:
			return RunCancelled, "", true
		case sdk.TaskLost:
			return RunInterrupted, msg, true
		}
		return RunError, msg, true
	case r.FlowID != "":
		f, err := s.eng.GetFlow(r.FlowID)
		if errors.Is(err, sdk.ErrNotFound) {
			return RunError, "flow " + r.FlowID + " is gone", true
		}
		if err != nil || !f.Status.Terminal() {
			return "", "", false
		}
		switch f.Status {
		case sdk.FlowSucceeded:
			return RunOK, "", true
		case sdk.FlowCancelled:
			return RunCancelled, "", true
		}
		return RunError, "flow " + string(f.Status), true
	}
	return RunError, "run has no task or flow", true
}

// promote moves the oldest buffered run of a job to starting when no run
// is active, and returns its scheduled time (zero if none).
func (s *Scheduler) promote(jobID string) (time.Time, error) {
	var next time.Time
	err := s.eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		next = time.Time{}
		rec, err := loadSched(tx, jobID)
		if err != nil || len(rec.Active) > 0 || len(rec.Buffered) == 0 {
			return err
		}
		t := rec.Buffered[0]
		rec.Buffered = rec.Buffered[1:]
		r, ok, err := loadRun(tx, jobID, t)
		if err != nil {
			return err
		}
		if ok && r.Status == RunBuffered {
			r.Status = RunStarting
			rec.Active = append(rec.Active, t)
			if err := putJSON(tx, runKey(jobID, t), r); err != nil {
				return err
			}
			if j, err := find(tx, jobID); err == nil {
				j.State.LastRun = t
				if err := putJob(tx, j); err != nil {
					return err
				}
			}
			next = t
		}
		return putSched(tx, jobID, rec)
	})
	return next, err
}

// finish records how the run at t ended (status empty: it already has),
// drops it from the active runs, and updates the job's state: the failure
// count and backoff, auto-disable at DisableAfter failures, and removal of
// a one-shot job with DeleteAfterRun after a run that succeeded. In the
// same transaction it queues the run's delivery and, when one is due, a
// failure alert (see outbox.go), so neither is lost to a crash.
func (s *Scheduler) finish(jobID string, t time.Time, status, msg string, now time.Time) error {
	var queued bool
	err := s.eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		queued = false
		rec, err := loadSched(tx, jobID)
		if err != nil {
			return err
		}
		rec.Active = removeTime(rec.Active, t)
		r, ok, err := loadRun(tx, jobID, t)
		if err != nil {
			return err
		}
		if !ok || !runOpen(r.Status) || status == "" {
			return putSched(tx, jobID, rec)
		}
		r.Status, r.Error, r.EndedAt = status, msg, now.UTC()
		j, err := find(tx, jobID)
		if errors.Is(err, ErrJobNotFound) {
			if err := putJSON(tx, runKey(jobID, t), r); err != nil {
				return err
			}
			return putSched(tx, jobID, rec)
		}
		if err != nil {
			return err
		}
		j.State.LastStatus = status
		failed := status == RunError || status == RunInterrupted
		switch {
		case status == RunOK:
			j.State.LastError, j.State.ConsecutiveErrors = "", 0
		case failed:
			j.State.LastError = msg
			j.State.ConsecutiveErrors++
			rec.LastFailure = now
			if off, reason := schedule.ShouldDisable(j.State.ConsecutiveErrors); off {
				j.Enabled, j.UpdatedAt, rec.DisabledReason = false, now, reason
				s.cfg.Logger.Warn("scheduler: job disabled", "job", j.ID, "name", j.Name, "reason", reason)
			}
			if j.Schedule.Kind != schedule.KindAt {
				j.State.NextRun = s.nextRunAfter(j, rec, now)
			}
		}
		if j.Delivery.Kind != DeliveryNone && j.Delivery.Kind != "" {
			if err := enqueue(tx, j, r, EventRunFinished, j.Delivery, now); err != nil {
				return err
			}
			r.Delivery, queued = DeliveryPending, true
		}
		a := j.FailureAlert
		if failed && a.After > 0 && schedule.AlertDue(j.State.ConsecutiveErrors, a.After, j.State.LastAlertAt, now, time.Duration(a.Cooldown)) {
			if err := enqueue(tx, j, r, EventFailureAlert, a.Destination(j.Delivery), now); err != nil {
				return err
			}
			r.Alert, queued, j.State.LastAlertAt = DeliveryPending, true, now
		}
		if err := putJSON(tx, runKey(jobID, t), r); err != nil {
			return err
		}
		if status == RunOK && j.DeleteAfterRun && j.Schedule.Kind == schedule.KindAt {
			for _, o := range removeOps(tx, j) {
				if err := tx.Delete(o.key); err != nil {
					return err
				}
			}
			return putSched(tx, jobID, rec) // kept while runs started by hand are open
		}
		if j.Enabled {
			rec.DisabledReason = ""
		}
		if err := putJob(tx, j); err != nil {
			return err
		}
		return putSched(tx, jobID, rec)
	})
	if err == nil && queued {
		s.wakeDeliveries()
	}
	return err
}

// Runs returns up to limit runs of the job with id or name ref, newest
// first; limit zero means all. The history of a removed job is found by
// its id.
func (s *Scheduler) Runs(ref string, limit int) ([]Run, error) {
	id := ref
	if j, err := s.jobs.Get(ref); err == nil {
		id = j.ID
	} else if !errors.Is(err, ErrJobNotFound) {
		return nil, err
	}
	var out []Run
	var decodeErr error
	err := s.eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) error {
		out, decodeErr = nil, nil
		return tx.Scan(runsPrefix(id), store.ScanOptions{Reverse: true, Limit: limit}, func(it store.Item) bool {
			var r Run
			if decodeErr = json.Unmarshal(it.Value, &r); decodeErr != nil {
				return false
			}
			out = append(out, r)
			return true
		})
	})
	if err == nil {
		err = decodeErr
	}
	return out, err
}

// JobStatus is a job with the Scheduler's view of it.
type JobStatus struct {
	Job            Job       `json:"job"`
	LastScheduled  time.Time `json:"last_scheduled,omitzero"`
	Active         int       `json:"active"`
	Buffered       int       `json:"buffered"`
	DisabledReason string    `json:"disabled_reason,omitempty"`
}

// Status returns every job, enabled ones first in order of next run, with
// its active and buffered run counts.
func (s *Scheduler) Status() ([]JobStatus, error) {
	jobs, err := s.jobs.List(true)
	if err != nil {
		return nil, err
	}
	out := make([]JobStatus, 0, len(jobs))
	err = s.eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) error {
		out = out[:0]
		for _, j := range jobs {
			rec, err := loadSched(tx, j.ID)
			if err != nil {
				return err
			}
			out = append(out, JobStatus{Job: j, LastScheduled: rec.LastScheduled, Active: len(rec.Active), Buffered: len(rec.Buffered), DisabledReason: rec.DisabledReason})
		}
		return nil
	})
	sort.SliceStable(out, func(a, b int) bool { return out[a].Job.Enabled && !out[b].Job.Enabled })
	return out, err
}
