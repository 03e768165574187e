package cli_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// tasks show prints the command a task runs in its task: row (not the
// label a second time), quoted as a shell reads it, and its result
// summary once it has one.
func TestTasksShowPrintsTheCommandAndResult(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var argv, shell *apitype.Task
	seed(t, home, func(eng *engine.Engine) {
		var err error
		argv, _, err = eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Label: "report",
			Spec: sdk.TaskSpec{Argv: []string{"render", "--title", "it's done", "out.pdf"}}})
		require.NoError(t, err)
		_, err = eng.StartTask(argv.ID, engine.StartInput{})
		require.NoError(t, err)
		_, err = eng.FinishTask(argv.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 1,
			Result: &sdk.Result{Summary: "3 pages rendered"}})
		require.NoError(t, err)
		shell, _, err = eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Label: "nightly", Spec: sdk.TaskSpec{Shell: "make all | tee log"}})
		require.NoError(t, err)
	})

	code, out, errOut := run(t, home, "tasks", "show", argv.ID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `label:\s+report\n`, out)
	require.Regexp(t, `task:\s+render --title 'it'\\''s done' out\.pdf\n`, out)
	require.Regexp(t, `result:\s+3 pages rendered\n`, out)

	code, out, errOut = run(t, home, "tasks", "show", shell.ID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `task:\s+make all \| tee log\n`, out)
	require.NotContains(t, out, "result:")
}
