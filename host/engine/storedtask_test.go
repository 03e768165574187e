package engine_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// A task record written while sdk.Task still carried the runner's fields
// (pids, member, progress offset, …) loads with all of them, and the
// engine goes on acting on them: the progress offset guards the next
// read, the in-place retry is not granted twice, and only the member the
// record names may end the attempt.
func TestTaskRecordWrittenBeforeTheSplitLoads(t *testing.T) {
	t.Parallel()
	eng, st, _ := newClockEngine(t)
	task := detached(t, eng)
	_, err := eng.StartTask(task.ID, engine.StartInput{Gateway: "box.4242"})
	require.NoError(t, err)
	old := fmt.Sprintf(`{
	  "id": %q, "flow_id": %q, "owner_key": "me", "runtime": "cli", "label": "backup",
	  "spec": {"argv": ["true"], "notify_on_milestone": ["built"]}, "status": "running", "attempts": 1,
	  "in_place_retried": true, "milestones_noticed": ["built"],
	  "pid": 4711, "pid_start_time": 123456, "gateway": "box.4242",
	  "shim_pid": 4710, "shim_start_time": 123450,
	  "progress_offset": 812, "progress_errors": 3,
	  "created_at": "2026-05-01T12:00:00Z", "started_at": "2026-05-01T12:00:00Z", "updated_at": "2026-05-01T12:00:00Z"
	}`, task.ID, task.FlowID)
	require.True(t, json.Valid([]byte(old)))
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("task/"+task.ID, []byte(old))
		return err
	}))

	got, err := eng.GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, 4711, got.PID)
	require.Equal(t, uint64(123456), got.PIDStartTime)
	require.Equal(t, 4710, got.ShimPID)
	require.Equal(t, uint64(123450), got.ShimStartTime)
	require.Equal(t, "box.4242", got.Gateway)
	require.True(t, got.InPlaceRetried)
	require.Equal(t, []string{"built"}, got.MilestonesNoticed)
	require.Equal(t, int64(812), got.ProgressOffset)
	require.Equal(t, 3, got.ProgressErrors)
	require.Equal(t, sdk.TaskRunning, got.Status)

	_, err = eng.RecordProgress(task.ID, engine.ProgressInput{From: 0, To: 10})
	require.ErrorIs(t, err, engine.ErrStaleProgress, "the stored offset guards the read")
	got, err = eng.RecordProgress(task.ID, engine.ProgressInput{From: 812, To: 900, Malformed: 1})
	require.NoError(t, err)
	require.Equal(t, int64(900), got.ProgressOffset)
	require.Equal(t, 4, got.ProgressErrors)

	_, err = eng.RequeueTask(task.ID, engine.RequeueInput{Attempt: 1, InPlace: true})
	require.ErrorIs(t, err, sdk.ErrInvalid, "the record's in-place retry was had already")
	_, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 1, Gateway: "elsewhere.1"})
	require.ErrorIs(t, err, sdk.ErrIllegalTransition, "the record names another member")
	done, err := eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 1, Gateway: "box.4242"})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskSucceeded, done.Status)
	require.Equal(t, 4711, done.PID, "the end keeps the record's pids")
}
