package scheduler

import (
	"encoding/json"
	"errors"
	"sort"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
)

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
	for i := range out {
		if out[i].Open() {
			out[i].Waiting = s.gateWait(out[i].FlowID)
		}
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
	// Waiting is set when an active run's flow waits at a gate: with the
	// default overlap policy, every run due meanwhile is skipped.
	Waiting *GateWait `json:"waiting,omitempty"`
}

// Status returns every job, enabled ones first in order of next run, with
// its active and buffered run counts.
func (s *Scheduler) Status() ([]JobStatus, error) {
	jobs, err := s.jobs.List(true)
	if err != nil {
		return nil, err
	}
	out := make([]JobStatus, 0, len(jobs))
	var active [][]time.Time
	err = s.eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) error {
		out, active = out[:0], active[:0]
		for _, j := range jobs {
			rec, err := loadSched(tx, j.ID)
			if err != nil {
				return err
			}
			out = append(out, JobStatus{Job: j, LastScheduled: rec.LastScheduled, Active: len(rec.Active), Buffered: len(rec.Buffered), DisabledReason: rec.DisabledReason})
			active = append(active, rec.Active)
		}
		return nil
	})
	for i := range out {
		out[i].Waiting = s.activeGate(out[i].Job.ID, active[i])
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Job.Enabled && !out[b].Job.Enabled })
	return out, err
}

// activeGate returns the gate the first of a job's active runs (by
// scheduled time) waits at, or nil.
func (s *Scheduler) activeGate(jobID string, active []time.Time) *GateWait {
	for _, t := range active {
		if r, ok, err := s.loadRun(jobID, t); err == nil && ok {
			if g := s.gateWait(r.FlowID); g != nil {
				return g
			}
		}
	}
	return nil
}
