package cli_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// tasks flow show on a failed flow says why it failed (the controller's
// summary, or else the failing task's error), which task it failed on,
// and the error its controller last gave for an event.
func TestFlowShowSaysWhyAFlowFailed(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	var summarized, bare *sdk.Flow
	var broken *apitype.Task
	seed(t, home, func(eng *engine.Engine) {
		fail := func(goal string, end engine.EndInput) (*sdk.Flow, *apitype.Task) {
			f, err := eng.CreateFlow(engine.CreateFlowInput{OwnerKey: "o", ControllerID: "ctl", Goal: goal})
			require.NoError(t, err)
			task, _, err := eng.CreateTask(engine.CreateTaskInput{FlowID: f.ID, OwnerKey: "o", Label: "compile",
				Spec: sdk.TaskSpec{Argv: []string{"make"}}})
			require.NoError(t, err)
			_, err = eng.StartTask(task.ID, engine.StartInput{})
			require.NoError(t, err)
			_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskFailed, Attempt: 1, Error: "exit status 2", Reason: "exit_code"})
			require.NoError(t, err)
			f, err = eng.GetFlow(f.ID)
			require.NoError(t, err)
			if end.BlockedTaskID == "-" {
				end.BlockedTaskID = task.ID
			}
			f, err = eng.Fail(f.ID, f.Revision, end)
			require.NoError(t, err)
			return f, task
		}
		summarized, broken = fail("ship", engine.EndInput{BlockedTaskID: "-", BlockedSummary: "step compile failed: exit status 2"})
		evs, err := eng.Events(summarized.ID)
		require.NoError(t, err)
		require.NotEmpty(t, evs)
		_, err = eng.EventFailed(summarized.ID, evs[0].Seq, engine.EventFailure{Error: "controller ctl: database unreachable", Counted: true, RetryAfter: time.Hour})
		require.NoError(t, err)
		bare, _ = fail("bare", engine.EndInput{})
	})

	code, out, errOut := run(t, home, "tasks", "flow", "show", summarized.ID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `status:\s+failed\n`, out)
	require.Regexp(t, `failedBecause:\s+step compile failed: exit status 2\n`, out, "a failed flow's summary is why it failed")
	require.NotContains(t, out, "blocked")
	require.Regexp(t, `failedTask:\s+`+broken.ID+` failed compile\n`, out)
	require.Regexp(t, `controllerError:\s+controller ctl: database unreachable\n`, out)

	code, out, errOut = run(t, home, "tasks", "flow", "show", bare.ID)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `failedBecause:\s+exit_code: exit status 2\n`, out, "with no summary, the failing task says why")
	require.Regexp(t, `failedTask:\s+\S+ failed compile\n`, out)
	require.NotContains(t, out, "controllerError")
}
