package scheduler

import (
	"errors"
	"fmt"
	"time"

	"github.com/flowgate/flowgate/host/schedule"
	"github.com/flowgate/flowgate/sdk"
)

// RunNow starts a run of the job with id or name ref at once, whether or
// not it is due, as `cron run` does. The run obeys the job's overlap
// policy (it may be skipped or buffered) and does not move the schedule.
// A disabled job is refused: enable it first. The returned run has its
// task or flow id when it started, and names by as who asked.
func (s *Scheduler) RunNow(ref, by string) (Run, error) {
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
		r, ok, err := s.claim(j.ID, now, now, claimOpts{trigger: TriggerManual, by: by})
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
	// By names who asked, for each run's record.
	By string
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
				r = Run{ID: RunID(j.ID, t), JobID: j.ID, Scheduled: t.UTC(), Status: RunPlanned, Trigger: TriggerBackfill, By: o.By, Session: j.Session}
			}
			out = append(out, r)
		}
		return out, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range times {
		r, ok, err := s.claim(j.ID, t, s.cfg.Now(), claimOpts{trigger: TriggerBackfill, overlap: o.Overlap, by: o.By})
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
