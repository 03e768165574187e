package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/shell"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// Diagnoser bounds.
const (
	// MaxDiagnosisTimeout is the longest a diagnoser may run.
	MaxDiagnosisTimeout = 60 * time.Second
	// maxDiagnosisAnswer bounds what a diagnoser may print; a longer
	// answer is invalid.
	maxDiagnosisAnswer = 64 << 10
	// maxEvidence and maxUncertainty bound what is stored of an answer.
	maxEvidence    = 4 << 10
	maxUncertainty = 1 << 10
	// maxDiagnosisTasks and maxDiagnosisMilestones bound the lists a
	// diagnoser is given.
	maxDiagnosisTasks      = 16
	maxDiagnosisMilestones = 8
)

// DiagnoserConfig configures the command asked for advice on failures
// that need a diagnosis. The command runs under /bin/sh -c in the
// flowgate home, in its own process group, gets a DiagnosisRequest as JSON on stdin and prints one
// JSON object: {"evidence": "…", "uncertainty": "…", "recommendation":
// "retry"|"revise"|"stop"}.
type DiagnoserConfig struct {
	// Command is the shell command line; empty means no diagnoser.
	Command string `yaml:"command"`
	// Timeout bounds one diagnosis; a task's own shorter timeout bounds
	// it further. If zero, 30s; at most MaxDiagnosisTimeout.
	Timeout time.Duration `yaml:"-"`
	// MaxOutputKiB bounds the task output the diagnoser is given, stdout
	// and stderr together. If zero, 16.
	MaxOutputKiB int `yaml:"max_output_kib"`
}

// WithDefaults returns a copy of c with zero fields set to their defaults.
func (c DiagnoserConfig) WithDefaults() DiagnoserConfig {
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
	}
	if c.MaxOutputKiB == 0 {
		c.MaxOutputKiB = 16
	}
	return c
}

// Validate names the first field that holds an impossible value.
func (c DiagnoserConfig) Validate() error {
	switch {
	case c.Timeout < 0 || c.Timeout > MaxDiagnosisTimeout:
		return fmt.Errorf("diagnoser.timeout must be between 1s and %s (got %s)", MaxDiagnosisTimeout, c.Timeout)
	case c.MaxOutputKiB < 0 || c.MaxOutputKiB > 1024:
		return fmt.Errorf("diagnoser.max_output_kib must be between 1 and 1024 (got %d)", c.MaxOutputKiB)
	}
	return nil
}

// DiagnosisRequest is what a diagnoser reads on stdin: bounded context
// about one failed attempt.
type DiagnosisRequest struct {
	TaskID  string           `json:"task_id"`
	FlowID  string           `json:"flow_id"`
	Goal    string           `json:"goal"`
	Attempt int              `json:"attempt"`
	Class   sdk.FailureClass `json:"class"`
	Error   string           `json:"error"`
	// Assignment is what the node was asked to do.
	Assignment DiagnosisAssignment `json:"assignment"`
	// Dependencies are the other tasks of the flow, newest last, at most
	// 16.
	Dependencies []DiagnosisDependency `json:"dependencies"`
	Progress     *sdk.Progress         `json:"progress,omitempty"`
	// Milestones are the task's latest milestones, at most 8.
	Milestones []sdk.Milestone `json:"milestones,omitempty"`
	// Stdout and Stderr are the ends of the attempt's output, together at
	// most the configured KiB.
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

// DiagnosisAssignment is the failed node's assignment.
type DiagnosisAssignment struct {
	Label       string `json:"label,omitempty"`
	Runtime     string `json:"runtime"`
	Command     string `json:"command,omitempty"`
	CurrentStep string `json:"current_step,omitempty"`
}

// DiagnosisDependency is another task of the failed node's flow.
type DiagnosisDependency struct {
	TaskID string         `json:"task_id"`
	Title  string         `json:"title"`
	Status sdk.TaskStatus `json:"status"`
}

// diagnosisAnswer is what a diagnoser prints.
type diagnosisAnswer struct {
	Evidence       string             `json:"evidence"`
	Uncertainty    json.RawMessage    `json:"uncertainty"`
	Recommendation sdk.Recommendation `json:"recommendation"`
}

// diagnose asks the diagnoser about failed attempt a of task, then acts
// on valid advice only: a retry recommendation is the node's one in-place
// retry of this run; anything else (revise, stop, an invalid, failed,
// cancelled or timed-out diagnosis) ends the task, with the diagnosis
// stored on it. The diagnosis is recorded as running before the diagnoser
// starts, so a restart meanwhile is seen (see afterFailure).
func (r *Runner) diagnose(ctx context.Context, task *stored.Task, a *attempt, in engine.FinishInput) {
	started, err := r.eng.BeginDiagnosis(task.ID, a.n, in.Class)
	if err != nil {
		in.Error += " (not diagnosed: " + err.Error() + ")"
		r.finish(task, in)
		return
	}
	d := *started.Diagnosis
	req := r.diagnosisRequest(started, a, in)
	r.log.Info("diagnosing task failure", "task", task.ID, "attempt", a.n)
	ans, state, derr := r.runDiagnoser(ctx, a, req, r.diagnosisTimeout(task))
	d.State, d.EndedAt = state, r.cfg.Now()
	if derr != nil {
		d.Error = derr.Error()
	} else {
		d.Evidence, d.Uncertainty, d.Recommendation = cut(ans.Evidence, maxEvidence), cut(uncertainty(ans.Uncertainty), maxUncertainty), ans.Recommendation
	}
	latest, err := r.eng.GetTask(task.ID)
	if err == nil && latest.CancelRequested() {
		in.Status, in.Reason = sdk.TaskCancelled, "cancelled"
		d.Action = "stopped: the task was cancelled"
	}
	switch {
	case d.Action != "":
	case state != sdk.DiagnosisDone:
		d.Action = "stopped: no retry without a valid diagnosis"
	case d.Recommendation == sdk.RecommendRetry && !started.InPlaceRetried:
		d.Action = "retried in place (the node's one in-place retry of this run)"
		r.retry(started, in.Error, engine.RequeueInput{Attempt: a.n, Class: in.Class, InPlace: true, Diagnosis: &d})
		return
	case d.Recommendation == sdk.RecommendRetry:
		d.Action = "stopped: the node already had its one in-place retry of this run"
	case d.Recommendation == sdk.RecommendRevise:
		d.Action = "stopped: a revision is advice for the controller or a person; it is never applied by itself"
	default:
		d.Action = "stopped: the diagnoser advised stopping"
	}
	in.Diagnosis = &d
	in.Error += fmt.Sprintf(" (diagnosis %s: %s)", d.State, d.Action)
	r.finish(started, in)
}

// diagnosisTimeout is the configured timeout, or the task's own when
// shorter.
func (r *Runner) diagnosisTimeout(task *stored.Task) time.Duration {
	d := r.cfg.Diagnoser.Timeout
	if t := time.Duration(task.Spec.Timeout); t > 0 && t < d {
		d = t
	}
	return d
}

// diagnosisRequest gathers the bounded context of failed attempt a.
func (r *Runner) diagnosisRequest(task *stored.Task, a *attempt, in engine.FinishInput) DiagnosisRequest {
	req := DiagnosisRequest{
		TaskID: task.ID, FlowID: task.FlowID, Attempt: a.n, Class: in.Class, Error: in.Error,
		Assignment: DiagnosisAssignment{Label: task.Label, Runtime: task.Runtime, Command: cut(commandLine(task.Spec), maxEvidence)},
		Progress:   task.Progress, Dependencies: []DiagnosisDependency{},
	}
	if n := len(task.Milestones); n > 0 {
		req.Milestones = task.Milestones[max(0, n-maxDiagnosisMilestones):]
	}
	if f, err := r.eng.GetFlow(task.FlowID); err == nil {
		req.Goal, req.Assignment.CurrentStep = f.Goal, f.CurrentStep
	}
	if tasks, err := r.eng.FlowTasks(task.FlowID); err == nil {
		for _, t := range tasks {
			if t.ID != task.ID {
				req.Dependencies = append(req.Dependencies, DiagnosisDependency{TaskID: t.ID, Title: cut(t.Title(), 200), Status: t.Status})
			}
		}
		req.Dependencies = req.Dependencies[max(0, len(req.Dependencies)-maxDiagnosisTasks):]
	}
	half := int64(r.cfg.Diagnoser.MaxOutputKiB) << 10 / 2
	req.Stdout, _ = readTail(filepath.Join(a.dir, "stdout"), half)
	req.Stderr, _ = readTail(filepath.Join(a.dir, "stderr"), half)
	req.Stdout, req.Stderr = strings.ToValidUTF8(req.Stdout, "?"), strings.ToValidUTF8(req.Stderr, "?")
	return req
}

// runDiagnoser runs the diagnoser with req on stdin, within timeout, and
// returns its answer and the diagnosis state. The diagnoser is stopped
// (its whole process group) when it runs out of time, when ctx ends (the
// gateway stops) or when the task is cancelled.
func (r *Runner) runDiagnoser(ctx context.Context, a *attempt, req DiagnosisRequest, timeout time.Duration) (diagnosisAnswer, string, error) {
	var ans diagnosisAnswer
	body, err := json.Marshal(req)
	if err != nil {
		return ans, sdk.DiagnosisFailed, fmt.Errorf("encode the diagnosis request: %w", err)
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	go func() {
		select {
		case <-a.cancel:
			cancel()
		case <-dctx.Done():
		}
	}()
	var stdout limitedBuffer
	cmd := shell.Command(dctx, r.cfg.Diagnoser.Command, time.Second)
	cmd.Stdin = bytes.NewReader(body)
	cmd.Stdout = &stdout
	cmd.Dir = r.cfg.Home
	cmd.Env = append(cmd.Env, "FLOWGATE_TASK_ID="+req.TaskID, "FLOWGATE_FLOW_ID="+req.FlowID)
	err = cmd.Run()
	switch {
	case errors.Is(dctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return ans, sdk.DiagnosisTimedOut, fmt.Errorf("the diagnoser ran past its %s timeout and was stopped", timeout)
	case dctx.Err() != nil:
		return ans, sdk.DiagnosisCancelled, errors.New("the diagnoser was stopped: the gateway is stopping or the task was cancelled")
	case err != nil && !errors.Is(err, exec.ErrWaitDelay):
		return ans, sdk.DiagnosisFailed, fmt.Errorf("the diagnoser failed: %w", err)
	case stdout.over:
		return ans, sdk.DiagnosisInvalid, fmt.Errorf("the diagnoser printed more than %d bytes; print one JSON object", maxDiagnosisAnswer)
	}
	dec := json.NewDecoder(bytes.NewReader(stdout.buf))
	if err := dec.Decode(&ans); err != nil {
		return ans, sdk.DiagnosisInvalid, fmt.Errorf("the diagnoser's answer is not a JSON object: %w", err)
	}
	switch ans.Recommendation {
	case sdk.RecommendRetry, sdk.RecommendRevise, sdk.RecommendStop:
	default:
		return ans, sdk.DiagnosisInvalid, fmt.Errorf("the diagnoser's recommendation %q is not retry, revise or stop", cut(string(ans.Recommendation), 80))
	}
	if strings.TrimSpace(ans.Evidence) == "" {
		return ans, sdk.DiagnosisInvalid, errors.New("the diagnoser's answer has no evidence; advice must say what it rests on")
	}
	return ans, sdk.DiagnosisDone, nil
}

// commandLine is what a task runs: its shell line or its argv.
func commandLine(s sdk.TaskSpec) string {
	if s.Shell != "" {
		return s.Shell
	}
	return strings.Join(s.Argv, " ")
}

// uncertainty renders a diagnoser's uncertainty, a string or a number, as
// text.
func uncertainty(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// cut shortens s to at most n bytes of valid UTF-8, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-3], "") + "…"
}

// limitedBuffer keeps the first maxDiagnosisAnswer bytes written and
// notes that there were more; it never fails a write, so the command is
// not stopped by a short write.
type limitedBuffer struct {
	buf  []byte
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := maxDiagnosisAnswer - len(b.buf); len(p) > room {
		b.over = true
		p = p[:max(room, 0)]
	}
	b.buf = append(b.buf, p...)
	return n, nil
}
