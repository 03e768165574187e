package scheduler

import (
	"errors"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/schedule"
)

// finish records how the run at t ended (status empty: it already has),
// drops it from the active runs, and updates the job's state: the failure
// count and backoff, auto-disable at DisableAfter failures, and removal of
// a one-shot job with DeleteAfterRun after a run that succeeded. In the
// same transaction it queues the run's delivery and, when one is due, a
// failure alert (see outbox.go), so neither is lost to a crash.
func (s *Scheduler) finish(jobID string, t time.Time, status, msg string, now time.Time) error {
	var queued, ended bool
	var name string // the job's, for the observer; empty once it is deleted
	err := s.eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		queued, ended, name = false, false, ""
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
		ended = true
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
		name = j.Name
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
				j.LastToggle = &Toggle{By: ByScheduler, At: now.UTC()}
				s.cfg.Logger.Warn("scheduler: job disabled", "job", j.ID, "name", j.Name, "reason", reason)
			}
			if j.Schedule.Kind != schedule.KindAt {
				j.State.NextRun = s.nextRunAfter(j, rec, now)
			}
		}
		if to := j.resultDestinations(); len(to) > 0 {
			if err := enqueue(tx, j, r, EventRunFinished, to, now); err != nil {
				return err
			}
			r.Delivery, queued = DeliveryPending, true
		}
		a := j.FailureAlert
		if failed && a.After > 0 && schedule.AlertDue(j.State.ConsecutiveErrors, a.After, j.State.LastAlertAt, now, time.Duration(a.Cooldown)) {
			if err := enqueue(tx, j, r, EventFailureAlert, a.Destinations(j), now); err != nil {
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
	if err == nil && ended {
		s.cfg.Observer.CronRunEnded(name, status)
	}
	if err == nil && queued {
		s.wakeDeliveries()
	}
	return err
}
