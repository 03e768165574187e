package cli_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// The log of a task another gateway of the installation ran is in that
// gateway's home: tasks logs says where, and fails, instead of printing
// nothing as if the task had written nothing.
func TestLogsOfAnotherGatewaysTaskSaysWhereTheyAre(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var id string
	seed(t, home, func(eng *engine.Engine) {
		task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true"}})
		require.NoError(t, err)
		_, err = eng.StartTask(task.ID, engine.StartInput{Gateway: "far.9"})
		require.NoError(t, err)
		id = task.ID
	})
	for _, args := range [][]string{{"tasks", "logs", id}, {"tasks", "logs", "--stderr", id}} {
		code, out, errOut := run(t, home, args...)
		require.Equal(t, 1, code, errOut)
		require.Empty(t, out)
		require.Contains(t, errOut, "the log of this task is on host far (gateway far.9), which is not reachable from here")
		require.Contains(t, errOut, "run flowgate logs "+id+" on that host")
	}
}
