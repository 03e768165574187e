package pipeline

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"time"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/sdk"
)

// taskKey is the idempotency key of a task: "<flow id>:<id>:<iteration>",
// where id is the step id (prefixed "<step id>>" inside a sub-workflow,
// suffixed "/<branch or sub-step id>" for parallel branches and for_each
// sub-steps) and iteration is the for_each item index, else 0.
func taskKey(flowID, id string, iteration int) string {
	return fmt.Sprintf("%s:%s:%d", flowID, id, iteration)
}

// taskSpec is what a shell command of frame fr runs: command templated
// against results, the environment env plus each step variable command
// names (flows.RefsEnv: a command quotes "$LOBSTER_STEP_ID_STDOUT"
// instead of pasting $id.stdout), the directory cwd, the resolved stdin
// as input, the timeout and retry policy.
func (r *run) taskSpec(fr *frame, results map[string]flows.StepResult, command string, stdin any, env map[string]string, cwd string, timeoutMs int, retry flows.Retry) (sdk.TaskSpec, error) {
	refs := flows.RefsEnv(command, results)
	maps.Copy(refs, env)
	spec := sdk.TaskSpec{
		Shell: flows.ResolveTemplate(command, fr.args, results),
		Env:   refs,
		Cwd:   cwd,
		Retry: retryPolicy(retry),
	}
	if timeoutMs > 0 {
		spec.Timeout = sdk.Duration(millis(float64(timeoutMs)))
	}
	v, ok, err := flows.ResolveStdin(stdin, fr.args, results)
	if err != nil {
		return spec, err
	}
	if ok && v != nil {
		spec.Input = flows.StdinText(v)
	}
	return spec, nil
}

// env is the environment a step of frame fr adds to the task's process
// environment: what the frame inherits from its calling step, then
// LOBSTER_ARGS_JSON and LOBSTER_ARG_*, the workflow's env, the step's env
// and the extra layers (a branch's or a loop sub-step's env), templated
// against results.
func (r *run) env(fr *frame, s *flows.Step, results map[string]flows.StepResult, extra ...map[string]string) map[string]string {
	env := maps.Clone(fr.env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, flows.StepEnv(fr.args, results, append([]map[string]string{fr.wf.Env, s.Env}, extra...)...))
	return env
}

// taskEnv is the environment of a task that step s of frame fr creates
// (see env). When a continuation reruns the top-level step the task belongs
// to, it adds that step's prior output as PriorOutputEnv: a parallel
// branch, a for_each sub-step, a sub-workflow's step or a pipeline stage
// gets the stdout of the top-level step it is part of, as a run step gets
// its own.
func (r *run) taskEnv(fr *frame, s *flows.Step, results map[string]flows.StepResult, extra ...map[string]string) map[string]string {
	env := r.env(fr, s, results, extra...)
	node, _, _ := strings.Cut(fr.prefix+s.ID, ">")
	if prior, ok := r.st.Prior[node]; ok {
		env[PriorOutputEnv] = prior
	}
	return env
}

// cwd is the working directory of a step of frame fr: the last non-empty
// of the workflow's cwd and cwds (${arg} templated), relative to the
// caller's directory as in the reference (§3.1). With none it is the
// frame's default: the caller's directory for the flow's workflow (the
// workflow file's directory for a flow started without a cwd), the
// calling step's directory for a sub-workflow.
func (r *run) cwd(fr *frame, cwds ...string) string {
	c := flows.StepCwd(fr.args, append([]string{fr.wf.Cwd}, cwds...)...)
	switch {
	case c == "":
		return fr.cwd
	case filepath.IsAbs(c):
		return c
	}
	return filepath.Join(r.top.cwd, c)
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
func taskResult(id string, timeoutMs int, t *sdk.Task) (flows.StepResult, error) {
	var res sdk.Result
	if t.Result != nil {
		res = *t.Result
	}
	switch t.Status {
	case sdk.TaskSucceeded:
		return shellResult(id, res)
	case sdk.TaskTimedOut:
		if timeoutMs > 0 {
			//lint:ignore ST1005 the reference's message
			return flows.StepResult{}, fmt.Errorf("Step '%s' timed out after %dms", id, timeoutMs)
		}
		//lint:ignore ST1005 the reference's message
		return flows.StepResult{}, fmt.Errorf("Step '%s' timed out", id)
	case sdk.TaskCancelled:
		return flows.StepResult{}, fmt.Errorf("step %s: its task was cancelled", id)
	case sdk.TaskBlocked:
		return flows.StepResult{}, fmt.Errorf("step %s: its task is blocked and needs a person: %s", id, firstNonEmpty(t.Blocked, "it gave no reason"))
	case sdk.TaskLost:
		return flows.StepResult{}, fmt.Errorf("step %s: its task was lost: %s", id, firstNonEmpty(lastError(t), "its process vanished"))
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
