package runner_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// A task whose secret values this runner does not hold (the gateway that
// accepted it restarted before it started) fails to start, saying why,
// instead of running without them.
func TestTaskWithoutItsHeldSecretFailsToStart(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	spec := h.spec("true")
	spec.SecretEnv = []string{"API_TOKEN"}
	got := h.wait(h.create(spec).ID)
	require.Equal(t, sdk.TaskFailed, got.Status)
	require.Equal(t, "start-failed", got.Reason)
	require.Contains(t, got.Errors[len(got.Errors)-1], "run the task again")
}

// holding creates a detached task through r.CreateHolding with env held.
func (h *home) holding(spec sdk.TaskSpec, env map[string]string) *stored.Task {
	h.t.Helper()
	task, created, err := h.gw.run.CreateHolding(spec, env, func() (*stored.Task, bool, error) {
		return h.eng().CreateTask(engine.CreateTaskInput{OwnerKey: "t", Spec: spec})
	})
	require.NoError(h.t, err)
	require.True(h.t, created)
	return task
}

// A held secret reaches the task's process, never a file, and is
// forgotten when the task ends, however it ends.
func TestHeldSecretReachesTheTaskOnly(t *testing.T) {
	t.Parallel()
	const secret = "held-s3cret-0b5e"
	h := newHome(t, nil)
	spec := h.spec(`printf %s "$API_TOKEN" > token`)
	spec.SecretEnv = []string{"API_TOKEN"}
	_, _, err := h.gw.run.CreateHolding(spec, nil, func() (*stored.Task, bool, error) { panic("not reached") })
	require.ErrorIs(t, err, sdk.ErrInvalid, "a secret without a value is refused")

	ran := h.holding(spec, map[string]string{"API_TOKEN": secret})
	cancelled := h.holding(h.spec("true"), map[string]string{"OTHER": "x"})
	_, err = h.eng().CancelTask(cancelled.ID)
	require.NoError(t, err)
	require.Equal(t, 2, h.gw.run.Held())
	h.start()
	require.Equal(t, sdk.TaskSucceeded, h.wait(ran.ID).Status)
	b, err := os.ReadFile(h.path("token"))
	require.NoError(t, err)
	require.Equal(t, secret, string(b))
	// The spec reaches the shim on a pipe; no file of the attempt holds
	// the secret.
	files, err := os.ReadDir(runner.LogDir(h.dir, ran.ID, 1))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(runner.LogDir(h.dir, ran.ID, 1), f.Name()))
		require.NoError(t, err)
		require.NotContains(t, string(b), secret, f.Name())
	}
	polltest.Until(t, "held values forgotten", func() bool { return h.gw.run.Held() == 0 })
}
