package scheduler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/host/store"
)

// TickOnce does one pass at the current time: it settles ended runs,
// starts buffered runs whose turn has come, and fires the jobs due. The
// loop calls it every Tick; tests call it directly. A scheduler with a
// Leader that does not lead does nothing.
func (s *Scheduler) TickOnce(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.leading() {
		s.lastPass = time.Time{}
		return nil
	}
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
	now, prev := s.cfg.Now(), s.lastPass
	s.lastPass = now
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
		if err := s.fire(j, now, prev); err != nil {
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

// lateTicks bounds a late pass: one at most lateTicks Ticks after the
// last is the loop running late (a slow store, a loaded machine), not
// downtime.
const lateTicks = 5

// fire handles a due job: it records the missed times, then claims and
// starts (or skips, or buffers) each time to run. prev is the time of
// this scheduler's last pass while it led (zero if none): a time that
// fell due since then is on time, however late this pass, and runs;
// only times that fell due while no pass ran (downtime, a suspend, a
// clock jump, a change of leader) are subject to the job's catch-up
// window.
func (s *Scheduler) fire(j Job, now, prev time.Time) error {
	var rec schedRecord
	if err := s.eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) (err error) { rec, err = loadSched(tx, j.ID); return err }); err != nil {
		return err
	}
	base := j.State.NextRun.Add(-time.Nanosecond)
	if rec.LastScheduled.After(base) {
		base = rec.LastScheduled
	}
	window := time.Duration(j.CatchUpWindow)
	if since := now.Sub(prev); !prev.IsZero() && since <= lateTicks*s.cfg.Tick && since > window {
		window = since
	}
	run, missed := schedule.PlanCatchUp(s.jobs.scheduleOf(j), base, now, window)
	if err := s.recordMissed(j.ID, missed, now); err != nil {
		return err
	}
	for range missed {
		s.cfg.Observer.CronRunEnded(j.Name, RunMissed)
	}
	for _, t := range run {
		r, ok, err := s.claim(j.ID, t, now, claimOpts{trigger: TriggerSchedule})
		if err != nil {
			return err
		}
		if ok {
			s.cfg.Observer.CronFired(now.Sub(t))
		}
		if ok && r.Status == RunSkipped {
			s.cfg.Observer.CronRunEnded(j.Name, RunSkipped)
		}
	}
	// Nothing was due after all (the due time lay in a backoff or the
	// schedule changed): move NextRun on so the job is not due every tick.
	if len(run) == 0 && len(missed) == 0 {
		return s.updateScheduled(func(tx engine.RecordTx) error {
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
	return s.updateScheduled(func(tx engine.RecordTx) error {
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
			missed := Run{ID: RunID(jobID, t), JobID: jobID, Scheduled: t.UTC(), Trigger: TriggerSchedule, Status: RunMissed, EndedAt: now.UTC(), Member: s.cfg.Member, Session: session}
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
