package runner_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// A task reattached after a restart, whose shim's exit is watched, is
// polled for its progress only: its record is read again when the shim
// exits, not at every poll. A gateway following a thousand tasks would
// otherwise read a thousand records ten times a second, and a restart's
// reattaching would wait behind those reads. The test takes the record
// away once the first look is done: a poll that read it would fail there
// and never reach the progress written next.
func TestReattachedPollReadsProgressNotRecord(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	task := h.create(h.spec("exec sleep 60"))
	dir := runner.LogDir(h.dir, task.ID, 1)
	polltest.Until(t, "the task's child to start", func() bool { return childStarted(dir) })
	waitTask(t, h.eng(), task.ID, func(t *stored.Task) bool { return t.PID != 0 }, waitLimit)
	h.restart()

	progress := filepath.Join(runner.TaskDir(h.dir, task.ID), runner.ProgressFile)
	say := func(msg string) {
		f, err := os.OpenFile(progress, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		require.NoError(t, err)
		_, err = f.WriteString(`{"message":"` + msg + `"}` + "\n")
		require.NoError(t, err)
		require.NoError(t, f.Close())
		waitTask(t, h.eng(), task.ID, func(t *stored.Task) bool { return t.Progress != nil && t.Progress.Message == msg }, waitLimit)
	}
	say("first look done") // the step that records it has started watching the shim's exit

	record := filepath.Join(dir, shim.RecordFile)
	require.NoError(t, os.Rename(record, record+".away"))
	require.NoError(t, os.Mkdir(record, 0o700)) // a record that cannot be read
	// Put back for the home's cleanup, which stops the shim by its record.
	t.Cleanup(func() {
		_ = os.Remove(record)
		_ = os.Rename(record+".away", record)
	})
	say("polled without the record")

	got, err := h.eng().GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskRunning, got.Status)
}
