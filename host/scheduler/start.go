package scheduler

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// cancelRun asks the engine to cancel a run's work. A run already ended is
// fine: the next tick settles it either way.
func (s *Scheduler) cancelRun(r Run) {
	var err error
	switch {
	case r.TaskID != "":
		_, err = s.eng.CancelTask(r.TaskID)
	case r.FlowID != "":
		_, err = s.eng.CancelFlow(r.FlowID, "")
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
			Spec: commandSpec(j, env), IdempotencyKey: key,
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

// commandSpec is the task of a command job's run, whose mirrored flow
// takes the job's notify policy and destinations. A "session:NAME" run
// with a session directory runs in it, as task session NAME, so its runs
// join the lineage of NAME in that directory as a pipeline's steps do.
func commandSpec(j Job, env map[string]string) sdk.TaskSpec {
	spec := sdk.TaskSpec{Shell: j.Payload.Command, Env: env, NotifyPolicy: j.Notify, NotifyTo: j.NotifyTo}
	if dir := env["FLOWGATE_SESSION_DIR"]; dir != "" {
		spec.Cwd, spec.Session = dir, &sdk.SessionSpec{Name: env["FLOWGATE_SESSION"]}
	}
	return spec
}

// pipelineFlow returns the flow of a pipeline run, with the job's notify
// policy and destinations: when redoing a start
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
	lineage, _ := strings.CutPrefix(j.Session, "session:") // "isolated" keeps none
	if lineage == SessionIsolated {
		lineage = ""
	}
	state, err := flows.Invocation{File: j.Payload.Pipeline, Args: j.Payload.Args, Cwd: filepath.Dir(j.Payload.Pipeline), Env: env,
		GateTimeoutMs: time.Duration(j.Payload.GateTimeout).Milliseconds(), Session: lineage}.State()
	if err != nil {
		return nil, err
	}
	return s.eng.CreateFlow(engine.CreateFlowInput{
		ControllerID: flows.PipelineController, OwnerKey: ownerKey(j.ID), Goal: j.Name, State: state, Origin: origin,
		NotifyPolicy: j.Notify, NotifyTo: j.NotifyTo,
	})
}
