package scheduler

import (
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/schedule"
)

// claimOpts says who asked for a run and how: the schedule (the loop), a
// person (RunNow) or a backfill, and the overlap policy to apply.
type claimOpts struct {
	trigger string
	// by names the person who asked, for the run record.
	by string
	// overlap overrides the job's policy when set (a backfill may).
	overlap schedule.Overlap
}

// claim handles one time t of a job in one transaction: it refuses a time
// that already has a record (so a time never runs twice, across
// restarts), applies the overlap policy, writes the run record, and, for a
// scheduled time, moves the job's LastScheduled and NextRun on. Then,
// outside the transaction, it cancels what cancel_other displaces and
// creates the work of a started run. A scheduled time's transaction is
// fenced on the leadership (updateScheduled). It returns the run as recorded; ok is
// false when t already had a record or the job is gone or disabled.
func (s *Scheduler) claim(jobID string, t time.Time, now time.Time, o claimOpts) (run Run, ok bool, err error) {
	var (
		action   schedule.Action
		toCancel []Run
	)
	update := func(fn func(engine.RecordTx) error) error { return s.eng.UpdateRecords(engine.CronRecords, fn) }
	if o.trigger == TriggerSchedule {
		update = s.updateScheduled
	}
	err = update(func(tx engine.RecordTx) error {
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
		run = Run{ID: RunID(jobID, t), JobID: jobID, Scheduled: t.UTC(), Trigger: o.trigger, By: o.by, Member: s.cfg.Member, Session: j.Session}
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
