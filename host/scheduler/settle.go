package scheduler

import (
	"errors"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

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
			return RunCancelled, deniedText(f), true
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
