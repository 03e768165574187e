package sdktest_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk"
	"github.com/flowgate/flowgate/sdk/sdktest"
)

// finished finishes a new task of a new flow with opts and returns it as
// ListTasks reads it.
func finished(t *testing.T, opts ...sdktest.FinishOption) *sdk.Task {
	t.Helper()
	h := sdktest.NewHost()
	f := newFlow(t, h)
	task, _, err := h.CreateTask(context.Background(), sdk.TaskRequest{FlowID: f.ID})
	require.NoError(t, err)
	_, err = h.FinishTask(task.ID, sdk.TaskSucceeded, opts...)
	require.NoError(t, err)
	tasks, err := h.ListTasks(context.Background(), f.ID)
	require.NoError(t, err)
	return tasks[0]
}

func TestFinishTaskResult(t *testing.T) {
	t.Parallel()
	empty := finished(t)
	require.NotNil(t, empty.Result, "a finished task always has a result")
	require.Equal(t, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", empty.Result.StdoutSHA256)
	require.Zero(t, empty.Result.StdoutBytes)
	require.Equal(t, 1, empty.Attempts, "a queued task is started before it ends")
	require.EqualValues(t, 0, *empty.ExitCode)

	js := finished(t, sdktest.Stdout("{\"n\": 1}\n"))
	require.Equal(t, "{\"n\": 1}\n", js.Result.Stdout)
	require.EqualValues(t, 9, js.Result.StdoutBytes)
	require.JSONEq(t, `{"n":1}`, string(js.Result.JSON))
	require.Equal(t, `{"n": 1}`, js.Result.Summary)

	text := finished(t, sdktest.Stdout("first\n  last line  \n\n"))
	require.Nil(t, text.Result.JSON)
	require.Equal(t, "last line", text.Result.Summary)

	long := finished(t, sdktest.Stdout(strings.Repeat("é", 300)))
	require.Len(t, []rune(long.Result.Summary), 200)
	require.True(t, strings.HasSuffix(long.Result.Summary, "…"))

	set := finished(t, sdktest.Result(sdk.Result{Summary: "as given", JSON: json.RawMessage(`[1]`)}))
	require.Equal(t, &sdk.Result{Summary: "as given", JSON: json.RawMessage(`[1]`)}, set.Result)
}
