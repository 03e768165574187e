package runner

import (
	"context"
	"fmt"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// afterFailure decides what follows failed attempt a of task, whose end
// is in (already classified): a retry, a diagnosis, or the end. Nothing is
// retried whose chain is billing- or budget-exhausted, and a diagnosis a
// restart interrupted is never run again.
func (r *Runner) afterFailure(ctx context.Context, task *stored.Task, a *attempt, in engine.FinishInput) {
	if d := task.Diagnosis; d != nil && d.Attempt == a.n && d.State == sdk.DiagnosisRunning {
		out := *d
		out.State, out.EndedAt = sdk.DiagnosisInterrupted, r.cfg.Now()
		out.Error = "a gateway restart interrupted the diagnoser; a diagnosis is never resumed by itself"
		out.Action = "stopped: no retry without a diagnosis"
		in.Diagnosis = &out
		in.Error += " (its diagnosis was interrupted by a restart; not retried)"
		r.finish(task, in)
		return
	}
	if in.Class != sdk.FailureBilling && in.Class != sdk.FailureFatal {
		if why, err := r.eng.FlowHalted(task.FlowID); err != nil || why != "" {
			in.Error += fmt.Sprintf(" (not retried: %s)", haltReason(why, err))
			r.finish(task, in)
			return
		}
	}
	switch in.Class {
	case sdk.FailureBilling:
		in.Error += " (billing failure: not retried nor diagnosed; its chain is marked billing-exhausted)"
	case sdk.FailureStartup:
		if !task.InPlaceRetried {
			r.retry(task, in.Error, engine.RequeueInput{Attempt: a.n, Class: in.Class, InPlace: true})
			return
		}
		in.Error += " (startup failure: its one in-place retry of this run is used)"
	case sdk.FailureNeedsDiagnosis:
		if r.cfg.Diagnoser.Command != "" {
			r.diagnose(ctx, task, a, in)
			return
		}
		if shouldRetry(task.Spec.Retry, a.n, in.Class) {
			r.retry(task, in.Error, engine.RequeueInput{Attempt: a.n, Class: in.Class})
			return
		}
	case sdk.FailureTransient:
		if shouldRetry(task.Spec.Retry, a.n, in.Class) {
			r.retryAfterNetwork(ctx, task, a, in)
			return
		}
	}
	r.finish(task, in)
}

// haltReason is why a chain stopped, or the error that kept it from
// being read (which stops a retry too: the runner never retries blind).
func haltReason(why string, err error) string {
	if err != nil {
		return "the chain's budget could not be read: " + err.Error()
	}
	return why
}

// reported says task reported progress, a milestone or usage: it got far
// enough to have created a child run.
func reported(task *stored.Task) bool {
	return task.Progress != nil || len(task.Milestones) > 0 || task.MilestonesDropped > 0 || task.Usage != nil
}
