package scheduler

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
)

// Store keys the Scheduler owns, beside the job records: one runtime record
// per job, and the run history, one record per scheduled time. The history
// key holds the scheduled time in Unix nanoseconds, zero-padded, so keys
// sort oldest first and a scheduled time has exactly one record.
//
// An index of the jobs with open runs (active or buffered), "cron/open/ID",
// lets each tick follow those jobs only.
const (
	schedPrefix = "cron/sched/"
	runPrefix   = "cron/run/"
	openPrefix  = "cron/open/"
)

func schedKey(jobID string) string   { return schedPrefix + jobID }
func openKey(jobID string) string    { return openPrefix + jobID }
func runsPrefix(jobID string) string { return runPrefix + jobID + "/" }
func runKey(jobID string, t time.Time) string {
	return fmt.Sprintf("%s%020d", runsPrefix(jobID), t.UnixNano())
}

// Run statuses, as recorded in the run history.
const (
	// RunStarting: the scheduled time is claimed and its work is being
	// created.
	RunStarting = "starting"
	// RunRunning: the run's task or flow exists and has not ended.
	RunRunning = "running"
	// RunBuffered: the run waits for the job's active run to end
	// (buffer_one, buffer_all, cancel_other).
	RunBuffered = "buffered"
	// RunOK and RunError: the run's task or flow ended, well or not.
	RunOK    = "ok"
	RunError = "error"
	// RunCancelled: the run's task or flow was cancelled (by an operator,
	// or by cancel_other). It does not count as a failure.
	RunCancelled = "cancelled"
	// RunSkipped: the overlap policy dropped the run.
	RunSkipped = "skipped"
	// RunMissed: the time passed while nothing ran it (downtime, suspend,
	// clock jump) and catch-up did not run it.
	RunMissed = "missed"
	// RunInterrupted: the run's task was lost (its process vanished while
	// the gateway was down, and it was not safe to repeat). It counts as a
	// failure.
	RunInterrupted = "interrupted"
	// RunPlanned: a time a backfill dry run would run. Never stored.
	RunPlanned = "planned"
)

// Run triggers: what asked for a run.
const (
	TriggerSchedule = "schedule"
	TriggerManual   = "manual"
	TriggerBackfill = "backfill"
)

// RunID names the run of a job at scheduled time t: "cron:<job-id>:<t in
// RFC 3339 with nanoseconds, UTC>". It is also the idempotency key of the
// run's task and the origin of its flow.
func RunID(jobID string, t time.Time) string {
	return "cron:" + jobID + ":" + t.UTC().Format(time.RFC3339Nano)
}

// runOpen reports whether a run with this status has not ended.
func runOpen(status string) bool {
	return status == RunStarting || status == RunRunning || status == RunBuffered
}

// Open reports whether the run has not ended: it is starting, running, or
// buffered behind another run of its job.
func (r Run) Open() bool { return runOpen(r.Status) }

// Run is one scheduled time of a job, as recorded in its history.
type Run struct {
	ID        string    `json:"id"`
	JobID     string    `json:"job_id"`
	Scheduled time.Time `json:"scheduled"`
	Status    string    `json:"status"`
	// Trigger is TriggerSchedule, TriggerManual or TriggerBackfill; empty
	// reads as TriggerSchedule.
	Trigger string `json:"trigger,omitempty"`
	// By names who asked for a manual run or a backfill (a run center
	// token's name, or --by); empty for a scheduled time.
	By string `json:"by,omitempty"`
	// Member is the gateway (its member id in an etcd installation)
	// that claimed the time or recorded it missed: the cron leader of
	// the moment for a scheduled time. Empty on a store one gateway
	// serves (bbolt).
	Member    string    `json:"member,omitempty"`
	Session   string    `json:"session,omitempty"`
	TaskID    string    `json:"task_id,omitempty"`
	FlowID    string    `json:"flow_id,omitempty"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	Error     string    `json:"error,omitempty"`
	// Delivery is how the run's result delivery went (pending, delivered,
	// failed; empty when the job delivers nowhere), with the last error.
	Delivery      string `json:"delivery,omitempty"`
	DeliveryError string `json:"delivery_error,omitempty"`
	// Alert is how the failure alert this run raised went, if it raised
	// one, with the last error.
	Alert      string `json:"alert,omitempty"`
	AlertError string `json:"alert_error,omitempty"`
	// Waiting is set by Scheduler.Runs on an open run whose flow waits at
	// a gate; it is read from the flow, never stored.
	Waiting *GateWait `json:"waiting,omitempty"`
}

// schedRecord is the Scheduler's runtime record for a job, kept apart from
// the job so that editing a job never races the loop over these fields.
type schedRecord struct {
	// LastScheduled is the last scheduled time handled (run, buffered,
	// skipped or missed); nothing at or before it fires again.
	LastScheduled time.Time `json:"last_scheduled,omitzero"`
	// Active lists the scheduled times whose runs are starting or running.
	Active []time.Time `json:"active,omitempty"`
	// Buffered lists the scheduled times waiting for the active run to end,
	// oldest first.
	Buffered []time.Time `json:"buffered,omitempty"`
	// LastFailure is when the last failed run ended; with the job's
	// consecutive errors it sets the failure backoff.
	LastFailure time.Time `json:"last_failure,omitzero"`
	// DisabledReason says why the scheduler disabled the job, if it did.
	DisabledReason string `json:"disabled_reason,omitempty"`
}

// open reports whether the job has runs to follow.
func (r schedRecord) open() bool { return len(r.Active) > 0 || len(r.Buffered) > 0 }

// putSched writes a job's runtime record and keeps its entry in the index
// of jobs with open runs.
// The record of a removed job goes once it has no open runs.
func putSched(tx engine.RecordTx, jobID string, rec schedRecord) error {
	if rec.open() {
		if err := putJSON(tx, schedKey(jobID), rec); err != nil {
			return err
		}
		return tx.Put(openKey(jobID), []byte{})
	}
	if err := tx.Delete(openKey(jobID)); err != nil {
		return err
	}
	if _, err := tx.Get(jobKey(jobID)); errors.Is(err, store.ErrKeyNotFound) {
		return tx.Delete(schedKey(jobID))
	}
	return putJSON(tx, schedKey(jobID), rec)
}

func getJSON(tx engine.RecordReadTx, key string, v any) (bool, error) {
	it, err := tx.Get(key)
	if errors.Is(err, store.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(it.Value, v); err != nil {
		return false, fmt.Errorf("read %s: %w", key, err)
	}
	return true, nil
}

func putJSON(tx engine.RecordTx, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Put(key, b)
}

func loadSched(tx engine.RecordReadTx, jobID string) (schedRecord, error) {
	var r schedRecord
	_, err := getJSON(tx, schedKey(jobID), &r)
	return r, err
}

func loadRun(tx engine.RecordReadTx, jobID string, t time.Time) (Run, bool, error) {
	var r Run
	ok, err := getJSON(tx, runKey(jobID, t), &r)
	return r, ok, err
}

// removeTime returns ts without t.
func removeTime(ts []time.Time, t time.Time) []time.Time {
	out := ts[:0:0]
	for _, v := range ts {
		if !v.Equal(t) {
			out = append(out, v)
		}
	}
	return out
}

// pruneRuns bounds a job's history: it deletes the oldest ended runs while
// more than keep remain, and ended runs scheduled before cutoff. Open runs
// are never deleted.
func pruneRuns(tx engine.RecordTx, jobID string, keep int, cutoff time.Time) error {
	var all []store.Item
	err := tx.Scan(runsPrefix(jobID), store.ScanOptions{}, func(it store.Item) bool {
		all = append(all, it)
		return true
	})
	if err != nil {
		return err
	}
	left := len(all)
	for _, it := range all {
		at, _ := strconv.ParseInt(strings.TrimPrefix(it.Key, runsPrefix(jobID)), 10, 64)
		if left <= keep && at >= cutoff.UnixNano() {
			break
		}
		var r Run
		if err := json.Unmarshal(it.Value, &r); err != nil {
			return fmt.Errorf("read %s: %w", it.Key, err)
		}
		if runOpen(r.Status) {
			continue
		}
		if err := tx.Delete(it.Key); err != nil {
			return err
		}
		left--
	}
	return nil
}
