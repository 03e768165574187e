package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
)

// The delivery outbox. When a run ends, finish queues its delivery (and a
// failure alert, when one is due) in the transaction that records the end,
// under "cron/outbox/<job>/<scheduled>/<event>". DeliverOnce sends what is
// due, outside any transaction and away from the scheduling loop, so a slow
// receiver never delays a run; an entry is deleted only once its delivery
// succeeded or ran out of attempts. Delivery is therefore at least once: a
// crash after sending and before the delete sends again, with the same
// Idempotency-Key. Skipped and missed times are not delivered.
const outboxPrefix = "cron/outbox/"

// Delivery statuses, as recorded on a run (Run.Delivery, Run.Alert) and in
// the job's state.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// Defaults for the delivery fields of Config.
const (
	DefaultDeliveryAttempts = 3
	deliverParallel         = 4
	deliverBatch            = 64
)

// deliveryBackoff is the wait before attempt n+1 of a delivery that failed
// n times.
func deliveryBackoff(n int) time.Duration {
	switch n {
	case 1:
		return 10 * time.Second
	case 2:
		return time.Minute
	}
	return 5 * time.Minute
}

// outboxEntry is one queued delivery. It carries what the report needs
// beyond the run record, so a job removed meanwhile (a one-shot deleted
// after its run) is still reported.
type outboxEntry struct {
	JobID             string    `json:"job_id"`
	JobName           string    `json:"job_name"`
	Session           string    `json:"session,omitempty"`
	Scheduled         time.Time `json:"scheduled"`
	Event             string    `json:"event"`
	To                Delivery  `json:"to"`
	ConsecutiveErrors int       `json:"consecutive_errors"`
	Attempts          int       `json:"attempts,omitempty"`
	NextAt            time.Time `json:"next_at"`
	LastError         string    `json:"last_error,omitempty"`
}

// outboxKey names the entry of event about the run of a job at t for its
// n-th destination; the first one's key has no number.
func outboxKey(jobID string, t time.Time, event string, n int) string {
	k := fmt.Sprintf("%s%s/%020d/%s", outboxPrefix, jobID, t.UnixNano(), event)
	if n > 0 {
		k += "/" + strconv.Itoa(n)
	}
	return k
}

// enqueue queues event about run r of job j for each destination of to,
// one entry each, due now: a destination that fails is retried alone.
func enqueue(tx engine.RecordTx, j Job, r Run, event string, to []Delivery, now time.Time) error {
	for n, d := range to {
		err := putJSON(tx, outboxKey(j.ID, r.Scheduled, event, n), outboxEntry{
			JobID: j.ID, JobName: j.Name, Session: j.Session, Scheduled: r.Scheduled, Event: event, To: d,
			ConsecutiveErrors: j.State.ConsecutiveErrors, NextAt: now.UTC(),
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// wakeDeliveries tells the delivery loop that something was queued.
func (s *Scheduler) wakeDeliveries() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// DeliverOnce sends the queued deliveries that are due, a few at a time,
// and records each outcome: on the run (Delivery or Alert, with the
// error) and, for a run's result, in the job's state. A failed delivery is
// tried again after a backoff, up to DeliveryAttempts times in all. If ctx
// ends mid-send, the entry stays queued for the next start. The delivery
// loop calls it every Tick and whenever a delivery is queued; tests call
// it directly. A scheduler with a Leader that does not lead delivers
// nothing: the leader does.
func (s *Scheduler) DeliverOnce(ctx context.Context) error {
	if !s.leading() {
		return nil
	}
	now := s.cfg.Now()
	type due struct {
		key string
		e   outboxEntry
	}
	var (
		list []due
		bad  error
	)
	err := s.eng.ViewRecords(engine.CronRecords, func(tx engine.RecordReadTx) error {
		list, bad = nil, nil
		return tx.Scan(outboxPrefix, store.ScanOptions{}, func(it store.Item) bool {
			var e outboxEntry
			if err := json.Unmarshal(it.Value, &e); err != nil {
				bad = errors.Join(bad, fmt.Errorf("read %s: %w", it.Key, err))
				return true
			}
			if !e.NextAt.After(now) {
				list = append(list, due{it.Key, e})
			}
			return len(list) < deliverBatch
		})
	})
	if err != nil {
		return err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs = []error{bad}
		sem  = make(chan struct{}, deliverParallel)
	)
	for _, d := range list {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := s.deliver(ctx, d.key, d.e); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// deliver sends one queued entry and records the outcome.
func (s *Scheduler) deliver(ctx context.Context, key string, e outboxEntry) error {
	r, found, err := s.loadRun(e.JobID, e.Scheduled)
	if err != nil {
		return err
	}
	if !found { // pruned from the history: report what the entry knows
		r = Run{ID: RunID(e.JobID, e.Scheduled), JobID: e.JobID, Scheduled: e.Scheduled}
	}
	var sendErr error
	if rep := s.report(e, r); e.To.Kind == DeliveryDest {
		sendErr = s.sendDest(ctx, e.To.Dest, rep)
	} else {
		sendErr = Deliver(ctx, e.To, rep, DeliverOptions{Timeout: s.cfg.DeliveryTimeout})
	}
	if ctx.Err() != nil {
		return nil // stopping: the entry stays queued
	}
	now := s.cfg.Now()
	return s.eng.UpdateRecords(engine.CronRecords, func(tx engine.RecordTx) error {
		var cur outboxEntry
		if ok, err := getJSON(tx, key, &cur); err != nil || !ok {
			return err
		}
		status, msg := DeliveryDelivered, ""
		if sendErr != nil {
			msg = sendErr.Error()
			cur.Attempts++
			cur.LastError = msg
			if cur.Attempts < s.cfg.DeliveryAttempts {
				cur.NextAt = now.Add(deliveryBackoff(cur.Attempts)).UTC()
				s.cfg.Logger.Warn("scheduler: delivery failed; will retry", "job", e.JobID, "event", e.Event, "attempt", cur.Attempts, "error", msg)
				if err := putJSON(tx, key, cur); err != nil {
					return err
				}
				return s.markDelivery(tx, e, DeliveryPending, msg)
			}
			status = DeliveryFailed
			s.cfg.Logger.Warn("scheduler: delivery failed; giving up", "job", e.JobID, "event", e.Event, "attempts", cur.Attempts, "error", msg)
		}
		if err := tx.Delete(key); err != nil {
			return err
		}
		return s.markDelivery(tx, e, status, msg)
	})
}

// markDelivery records a delivery's status and error on its run and, for
// a run's result, in the job's state. A run sent to several destinations
// is failed once one of them has failed for good, and delivered only
// once none is left queued.
func (s *Scheduler) markDelivery(tx engine.RecordTx, e outboxEntry, status, msg string) error {
	if r, ok, err := loadRun(tx, e.JobID, e.Scheduled); err != nil {
		return err
	} else if ok {
		at, atErr := &r.Delivery, &r.DeliveryError
		if e.Event == EventFailureAlert {
			at, atErr = &r.Alert, &r.AlertError
		}
		others, err := queuedFor(tx, e)
		if err != nil {
			return err
		}
		switch {
		case *at == DeliveryFailed:
			status, msg = *at, *atErr
		case status == DeliveryDelivered && others:
			status, msg = DeliveryPending, *atErr
		}
		*at, *atErr = status, msg
		if err := putJSON(tx, runKey(e.JobID, e.Scheduled), r); err != nil {
			return err
		}
	}
	if e.Event != EventRunFinished || status == DeliveryPending {
		return nil
	}
	j, err := find(tx, e.JobID)
	if errors.Is(err, ErrJobNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	j.State.LastDelivery, j.State.LastDeliveryError = status, msg
	return putJob(tx, j)
}

// queuedFor reports whether an entry of e's run and event, for any of
// its destinations, is still queued.
func queuedFor(tx engine.RecordTx, e outboxEntry) (bool, error) {
	first := outboxKey(e.JobID, e.Scheduled, e.Event, 0)
	found := false
	err := tx.Scan(first, store.ScanOptions{}, func(it store.Item) bool {
		found = it.Key == first || strings.HasPrefix(it.Key, first+"/")
		return !found
	})
	return found, err
}

// report builds what a delivery sends about run r: the run, and the
// result of its work (the task's result, or the pipeline's output).
func (s *Scheduler) report(e outboxEntry, r Run) Report {
	rep := Report{
		Event: e.Event, JobID: e.JobID, JobName: e.JobName, RunID: RunID(e.JobID, e.Scheduled),
		Scheduled: e.Scheduled, StartedAt: r.StartedAt, EndedAt: r.EndedAt, Status: r.Status, Error: r.Error,
		TaskID: r.TaskID, FlowID: r.FlowID, Session: e.Session, ConsecutiveErrors: e.ConsecutiveErrors,
	}
	switch {
	case r.TaskID != "":
		if t, err := s.eng.GetTask(r.TaskID); err == nil && t.Result != nil {
			rep.Result, _ = json.Marshal(t.Result)
			rep.Output = stdoutTail(t.Result)
		}
	case r.FlowID != "":
		if f, err := s.eng.GetFlow(r.FlowID); err == nil {
			kept := func(sum string) ([]byte, error) { return s.eng.Kept(f.ID, sum) }
			if out, err := f.Output.ReadValue(kept); err == nil && json.Valid(out) {
				rep.Result = out
			}
		}
	}
	return rep
}
