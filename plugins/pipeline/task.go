package pipeline

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// taskKey is the idempotency key of a step's task. iteration counts runs
// of the same step; it is 0 until loops are supported.
func taskKey(flowID, stepID string, iteration int) string {
	return fmt.Sprintf("%s:%s:%d", flowID, stepID, iteration)
}

// taskSpec is what a shell step runs: the templated command, its
// environment (LOBSTER_ARGS_JSON, LOBSTER_ARG_*, workflow and step env),
// its directory, its stdin text, timeout and retry policy.
func (r *run) taskSpec(s *flows.Step) (sdk.TaskSpec, error) {
	spec := sdk.TaskSpec{
		Shell: flows.ResolveTemplate(s.Run, r.args, r.st.Results),
		Env:   r.env(s),
		Cwd:   r.cwd(s),
		Retry: retryPolicy(s.Retry),
	}
	if s.TimeoutMs > 0 {
		spec.Timeout = sdk.Duration(millis(float64(s.TimeoutMs)))
	}
	v, ok, err := flows.ResolveStdin(s.Stdin, r.args, r.st.Results)
	if err != nil {
		return spec, err
	}
	if ok && v != nil {
		spec.Input = flows.StdinText(v)
	}
	return spec, nil
}

// env is the environment a step adds to the task's process environment.
func (r *run) env(s *flows.Step) map[string]string {
	return flows.StepEnv(r.args, r.st.Results, r.wf.Env, s.Env)
}

// cwd is a step's working directory: the step's or the workflow's cwd
// (${arg} templated), relative to the caller's directory as in the
// reference (§3.1), which is also the default. A flow started without a
// cwd uses the workflow file's directory instead.
func (r *run) cwd(s *flows.Step) string {
	base := r.st.Cwd
	if base == "" {
		base = filepath.Dir(r.wf.File)
	}
	c := flows.StepCwd(r.args, r.wf.Cwd, s.Cwd)
	switch {
	case c == "":
		return base
	case filepath.IsAbs(c):
		return c
	}
	return filepath.Join(base, c)
}

// retryPolicy maps a step's retry policy onto the task's. The task's
// backoff doubles up to a cap, so fixed delays are a cap equal to the
// delay. The task runner always jitters by ±25%, whatever jitter says.
// It returns nil for a single attempt.
func retryPolicy(rp flows.Retry) *sdk.RetryPolicy {
	if rp.Max <= 1 {
		return nil
	}
	base := millis(rp.DelayMs)
	ceiling := base
	if rp.Backoff == "exponential" {
		ceiling = millis(rp.MaxDelayMs)
	}
	base = min(base, ceiling)
	// Zero means a default (1s, 5m) to the runner; the shortest real
	// delay it can be asked for stands in for none.
	base, ceiling = max(base, time.Millisecond), max(ceiling, time.Millisecond)
	return &sdk.RetryPolicy{MaxAttempts: rp.Max, Backoff: sdk.Duration(base), MaxBackoff: sdk.Duration(ceiling)}
}

func millis(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// taskResult turns a finished task into the step's result, or the error
// the step failed with.
func taskResult(s *flows.Step, t *sdk.Task) (flows.StepResult, error) {
	var res sdk.Result
	if t.Result != nil {
		res = *t.Result
	}
	switch t.Status {
	case sdk.TaskSucceeded:
		if res.StdoutBytes > int64(len(res.Stdout)) {
			return flows.StepResult{}, fmt.Errorf("step %s printed %d bytes, more than a task result keeps (256 KiB); write large output to a file and print its path", s.ID, res.StdoutBytes)
		}
		return flows.ShellResult(s.ID, res.Stdout), nil
	case sdk.TaskTimedOut:
		if s.TimeoutMs > 0 {
			//lint:ignore ST1005 the reference's message
			return flows.StepResult{}, fmt.Errorf("Step '%s' timed out after %dms", s.ID, s.TimeoutMs)
		}
		//lint:ignore ST1005 the reference's message
		return flows.StepResult{}, fmt.Errorf("Step '%s' timed out", s.ID)
	case sdk.TaskCancelled:
		return flows.StepResult{}, fmt.Errorf("step %s: its task was cancelled", s.ID)
	case sdk.TaskLost:
		return flows.StepResult{}, fmt.Errorf("step %s: its task was lost: %s", s.ID, firstNonEmpty(lastError(t), "its process vanished"))
	}
	code := "null"
	if t.ExitCode != nil {
		code = fmt.Sprint(*t.ExitCode)
	}
	detail := firstNonEmpty(lastError(t), strings.TrimSpace(res.Stdout), t.Spec.Shell)
	return flows.StepResult{}, errors.New("workflow command failed (" + code + "): " + detail)
}

func lastError(t *sdk.Task) string {
	if len(t.Errors) == 0 {
		return ""
	}
	return strings.TrimSpace(t.Errors[len(t.Errors)-1])
}
