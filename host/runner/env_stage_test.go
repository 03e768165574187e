package runner_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/flows"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// A pipeline stage's task naming a variable of Config.StageSecretEnv gets
// its value from the gateway's environment when it starts, with nothing
// held beforehand, as after a restart; a name the config does not list
// gets nothing, and the task fails to start saying why.
func TestStageSecretComesFromTheGatewayEnvironment(t *testing.T) {
	const secret = "stage-s3cret-91c2"
	t.Setenv("FLOWGATE_TEST_STAGE_KEY", secret)
	t.Setenv("FLOWGATE_TEST_UNLISTED", "nope")
	h := startHome(t, func(c *runner.Config) { c.StageSecretEnv = []string{"FLOWGATE_TEST_STAGE_KEY"} })
	f, _, err := h.eng().CreateControllerFlow(flows.PipelineController, sdk.FlowRequest{IdempotencyKey: "k", Goal: "g", OwnerKey: "t"})
	require.NoError(t, err)
	create := func(key, name string) *stored.Task {
		spec := h.spec(`printf %s "$` + name + `" > ` + name)
		spec.SecretEnv = []string{name}
		task, _, err := h.eng().CreateTask(engine.CreateTaskInput{FlowID: f.ID, Runtime: flows.PipelineController, IdempotencyKey: key, Spec: spec})
		require.NoError(t, err)
		return task
	}
	listed := create("listed", "FLOWGATE_TEST_STAGE_KEY")
	require.Equal(t, sdk.TaskSucceeded, h.wait(listed.ID).Status)
	b, err := os.ReadFile(h.path("FLOWGATE_TEST_STAGE_KEY"))
	require.NoError(t, err)
	require.Equal(t, secret, string(b))

	unlisted := create("unlisted", "FLOWGATE_TEST_UNLISTED")
	got := h.wait(unlisted.ID)
	require.Equal(t, sdk.TaskFailed, got.Status)
	require.Contains(t, got.Errors[len(got.Errors)-1], "run the task again")
}
