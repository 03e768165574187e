package runner

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/shell"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// CreateHolding runs create, which creates a task, and holds env (the
// values sdk.TaskSpec.SecretEnv names and, with InheritEnv, the caller's
// environment) in memory for that task's attempts. The values are never
// written anywhere: they reach the shim as its environment. A task with no
// such values is created as is. It refuses a task whose SecretEnv names a
// variable env lacks. When create returns an existing task (an idempotency
// key), nothing is held: that task got its values when it was created.
func (r *Runner) CreateHolding(spec sdk.TaskSpec, env map[string]string, create func() (*stored.Task, bool, error)) (*stored.Task, bool, error) {
	for _, name := range spec.SecretEnv {
		if _, ok := env[name]; !ok {
			return nil, false, fmt.Errorf("%w: secret env %s has no value; pass it with --secret-env %s (from the environment) or --secret-env %s=@FILE", sdk.ErrInvalid, name, name, name)
		}
	}
	if len(env) == 0 {
		return create()
	}
	// Creating under the write lock means the dispatcher, which reads
	// held values under the read lock, never sees the task before its
	// values.
	r.holdMu.Lock()
	defer r.holdMu.Unlock()
	task, created, err := create()
	if err == nil && created {
		r.held[task.ID] = maps.Clone(env)
	}
	return task, created, err
}

// shimEnv returns the environment task's shim starts with: shell.BaseEnv
// of the runner's own, then the values held for the task. It fails when the task
// needs held values this runner does not have.
func (r *Runner) shimEnv(task *stored.Task) ([]string, error) {
	env := shell.BaseEnv(os.Environ())
	if len(task.Spec.SecretEnv) == 0 && !task.Spec.InheritEnv {
		return env, nil
	}
	r.holdMu.RLock()
	held, ok := r.held[task.ID]
	r.holdMu.RUnlock()
	if !ok {
		held, ok = r.stageSecrets(task)
	}
	if !ok {
		return nil, fmt.Errorf("its secret or inherited environment was held only in the memory of the gateway that accepted it, which has stopped since; run the task again")
	}
	for _, k := range slices.Sorted(maps.Keys(held)) {
		env = append(env, k+"="+held[k])
	}
	return env, nil
}

// stageSecrets are the values of a pipeline stage's task whose SecretEnv
// names only variables of Config.StageSecretEnv, read from this process's
// environment; false for any other task, or when one is unset.
func (r *Runner) stageSecrets(task *stored.Task) (map[string]string, bool) {
	if task.Spec.InheritEnv || task.Runtime != flows.PipelineController || task.FlowID == "" {
		return nil, false
	}
	vals := map[string]string{}
	for _, name := range task.Spec.SecretEnv {
		v, set := os.LookupEnv(name)
		if !set || !slices.Contains(r.cfg.StageSecretEnv, name) {
			return nil, false
		}
		vals[name] = v
	}
	return vals, true
}

// pruneHeld forgets the values held for tasks that ended or are gone,
// however they ended (cancelled while queued, say): held values live no
// longer than their task.
func (r *Runner) pruneHeld() {
	r.holdMu.RLock()
	ids := slices.Collect(maps.Keys(r.held))
	r.holdMu.RUnlock()
	for _, id := range ids {
		t, err := r.eng.GetTask(id)
		if errors.Is(err, sdk.ErrNotFound) || err == nil && t.Status.Terminal() {
			r.holdMu.Lock()
			delete(r.held, id)
			r.holdMu.Unlock()
		}
	}
}
