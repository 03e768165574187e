package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/sdk"
)

// TestNoticeGaveUp: giving up on a notice removes it from the outbox,
// appends notify.failed to its flow's history and keeps a failed notice
// for the audit, all at once; a second give-up changes nothing;
// pruning the flow takes the failed notice with it.
func TestNoticeGaveUp(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "o", Spec: sdk.TaskSpec{Shell: "true"}})
	require.NoError(t, err)
	key := task.ID + "/failed/ops"
	require.ErrorContains(t, eng.QueueNotice(engine.Notice{Key: key}), "needs a key and a destination")
	require.NoError(t, eng.QueueNotice(engine.Notice{Key: key, TaskID: task.ID, Status: "failed", Event: "task.milestone", Dest: "ops"}))
	require.NoError(t, eng.NoticeFailed(key, "503", time.Now()))

	require.NoError(t, eng.NoticeGaveUp(key, "ops", "webhook destination ops answered 503 Service Unavailable"))
	require.NoError(t, eng.NoticeGaveUp(key, "ops", "again"), "a notice already given up on is not an error")
	due, err := eng.DueNotices(time.Now().Add(time.Hour), 0)
	require.NoError(t, err)
	require.Empty(t, due)
	failed, err := eng.FailedNotices()
	require.NoError(t, err)
	require.Len(t, failed, 1)
	require.Equal(t, task.FlowID, failed[0].FlowID, "a task's notice belongs to its flow")
	require.Equal(t, 2, failed[0].Attempts)

	page, err := eng.History(task.FlowID, 0, 0)
	require.NoError(t, err)
	last := page.Entries[len(page.Entries)-1]
	require.Equal(t, engine.HistoryNotifyFailed, last.Kind)
	require.Equal(t, "gave up sending task.milestone to ops after 2 attempts: webhook destination ops answered 503 Service Unavailable", last.Summary)

	_, err = eng.CancelTask(task.ID)
	require.NoError(t, err)
	_, err = eng.PruneFlow(task.FlowID, time.Now().Add(time.Hour))
	require.NoError(t, err)
	failed, err = eng.FailedNotices()
	require.NoError(t, err)
	require.Empty(t, failed, "a failed notice goes with its flow")
}
