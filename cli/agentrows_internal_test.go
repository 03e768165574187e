package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/api/apitype"
	"github.com/flowgate/flowgate/sdk"
)

// TestShowNotStartedYet: tasks show on a run whose child has recorded
// nothing yet says so, and shows a give-up and the attempt log.
func TestShowNotStartedYet(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeTask(&b, &apitype.Task{Task: sdk.Task{ID: "t1", Status: sdk.TaskRunning, Attempts: 1, Runtime: "agent", Spec: sdk.TaskSpec{Shell: "agent"}}})
	require.Contains(t, b.String(), "not started yet")
	require.NotContains(t, b.String(), "failed")

	b.Reset()
	writeTask(&b, &apitype.Task{
		Task: sdk.Task{
			ID: "t2", Status: sdk.TaskSucceeded, Attempts: 2, Spec: sdk.TaskSpec{Shell: "agent", OnFinish: &sdk.FinishNotify{Webhook: "https://u:secret@example.com/hook"}},
			Interrupted: &sdk.Interruption{Reason: "no-progress", At: time.Unix(0, 0), ChildStillRunning: true},
			AttemptLog:  []sdk.AttemptRecord{{Attempt: 1, Class: sdk.FailureTransient, Offline: sdk.Duration(time.Second)}, {Attempt: 2, Resumed: true}},
		},
		PID: 42,
	})
	out := b.String()
	require.NotContains(t, out, "not started yet")
	require.Contains(t, out, "no-progress at")
	require.Contains(t, out, "child ended since", "a task that ended has no child running")
	require.NotContains(t, out, "still running")
	require.Contains(t, out, "failed: transient, offline 1s")
	require.Contains(t, out, "resumed after a network check")
	require.NotContains(t, out, "secret")

	b.Reset()
	writeTask(&b, &apitype.Task{
		Task: sdk.Task{
			ID: "t3", Status: sdk.TaskRunning, Attempts: 1, Spec: sdk.TaskSpec{Shell: "agent"},
			Interrupted: &sdk.Interruption{Reason: "no-progress", At: time.Unix(0, 0), ChildStillRunning: true},
		},
		PID: 42,
	})
	require.Contains(t, b.String(), "child still running")
}
