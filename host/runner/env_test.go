package runner_test

import (
	"testing"

	"github.com/stretchr/testify/require"

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
