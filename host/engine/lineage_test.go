package engine_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// sessionTask creates and starts a task of session "work" in workspace
// /ws, step step.
func sessionTask(t *testing.T, eng *engine.Engine, step string, fresh bool) *stored.Task {
	t.Helper()
	task, _, err := eng.CreateTask(engine.CreateTaskInput{Runtime: "cli", OwnerKey: "o", Spec: sdk.TaskSpec{
		Argv: []string{"agent"}, Cwd: "/ws", Session: &sdk.SessionSpec{Name: "work", Step: step, ResumePrompt: "go on", Fresh: fresh},
	}})
	require.NoError(t, err)
	task, err = eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	return task
}

// reportSession records the progress line {"session_id":id} of task.
func reportSession(t *testing.T, eng *engine.Engine, task *stored.Task, id string) *stored.Task {
	t.Helper()
	task, err := eng.GetTask(task.ID)
	require.NoError(t, err)
	task, err = eng.RecordProgress(task.ID, engine.ProgressInput{From: task.ProgressOffset, To: task.ProgressOffset + 10, Session: &engine.SessionReport{ID: id, ContextTokens: 900}})
	require.NoError(t, err)
	return task
}

// nextRun runs a task of session "work", step step, in workspace 1:2
// that reports session id and never ends, then starts the step's next
// task there asking to resume id, and returns that task.
func nextRun(t *testing.T, eng *engine.Engine, step string, fresh bool, id string) *stored.Task {
	t.Helper()
	first := sessionTask(t, eng, step, fresh)
	_, err := eng.BeginSession(first.ID, engine.SessionStart{WorkspaceID: "1:2"})
	require.NoError(t, err)
	reportSession(t, eng, first, id)
	next := sessionTask(t, eng, step, fresh)
	next, err = eng.BeginSession(next.ID, engine.SessionStart{WorkspaceID: "1:2", Resume: id})
	require.NoError(t, err)
	return next
}

func TestReportedSessionIsInTheLineageAtOnce(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	task := sessionTask(t, eng, "", false)
	task, err := eng.BeginSession(task.ID, engine.SessionStart{WorkspaceID: "1:2"})
	require.NoError(t, err)
	require.Equal(t, &sdk.TaskSession{}, task.Session, "a first run starts fresh")

	task = reportSession(t, eng, task, "s-1")
	require.Equal(t, &sdk.TaskSession{ID: "s-1", ContextTokens: 900}, task.Session)
	l, err := eng.Lineage("work", "/ws")
	require.NoError(t, err)
	require.Equal(t, "s-1", l.Steps["main"].SessionID, "written with the progress line, not when the task ends")
	require.Equal(t, task.ID, l.Steps["main"].TaskID)
	require.Equal(t, "/ws", l.Workspace)
	require.Equal(t, "1:2", l.WorkspaceID)

	// The task's next attempt (a retry) continues its own session with
	// the resume prompt.
	task, err = eng.BeginSession(task.ID, engine.SessionStart{WorkspaceID: "1:2", Resume: "s-1"})
	require.NoError(t, err)
	require.True(t, task.Session.Resumed)
	require.True(t, task.Session.Interrupted)
}

func TestBeginSessionContinuesOnlyTheSameWorkspace(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	// The first run never ended: the next one is a continuation of an
	// interrupted run.
	next := nextRun(t, eng, "", false, "s-1")
	require.Equal(t, "s-1", next.Session.ID)
	require.True(t, next.Session.Resumed)
	require.True(t, next.Session.Interrupted)
	require.Equal(t, 1, next.Session.Wake)
	require.Equal(t, "flowgate: waking session work in /ws (wake 1): step main continues s-1 after an interrupted run, context 900 tokens", next.Session.Banner)
	l, err := eng.Lineage("work", "/ws")
	require.NoError(t, err)
	require.Equal(t, 1, l.Wakes)
	require.Equal(t, next.Session.Banner, l.Banner)

	// Another directory at the same path: the lineage is archived, the
	// run starts fresh.
	moved := sessionTask(t, eng, "", false)
	moved, err = eng.BeginSession(moved.ID, engine.SessionStart{WorkspaceID: "1:3", Resume: "s-1"})
	require.NoError(t, err)
	require.False(t, moved.Session.Resumed)
	all, err := eng.Lineages("work", true)
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, 0, all[0].Wakes, "the new live lineage")
	require.Equal(t, "1:3", all[0].WorkspaceID)
	require.Equal(t, 1, all[1].Wakes, "the archived one keeps its wakes")
	require.False(t, all[1].ArchivedAt.IsZero())
}

// The wake banner is an entry of the task's flow history, written with
// the session start, and kept however long the history grows.
func TestWakeBannerIsInTheFlowHistory(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	next := nextRun(t, eng, "", false, "s-1")
	require.NotEmpty(t, next.Session.Banner)

	page, err := eng.History(next.FlowID, 0, 0)
	require.NoError(t, err)
	var wakes []engine.HistoryEntry
	for _, en := range page.Entries {
		if en.Kind == engine.HistoryWake {
			wakes = append(wakes, en)
		}
	}
	require.Len(t, wakes, 1, "one entry for the one wake")
	require.Equal(t, next.Session.Banner, wakes[0].Summary)
	require.Equal(t, next.ID, wakes[0].TaskID)
	require.True(t, engine.HistoryWake.Kept())
}

func TestFreshStepNeverContinues(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	again := nextRun(t, eng, "judge", true, "j-1")
	require.False(t, again.Session.Resumed)
}

func TestDamagedLineageIsAbsentAndArchiveKeepsIt(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	eng, err := engine.New(st, engine.Config{})
	require.NoError(t, err)
	task := sessionTask(t, eng, "", false)
	_, err = eng.BeginSession(task.ID, engine.SessionStart{WorkspaceID: "1:2"})
	require.NoError(t, err)
	var key string
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		if err := tx.Scan("lineage/work/", store.ScanOptions{}, func(it store.Item) bool {
			key = it.Key
			return false
		}); err != nil {
			return err
		}
		_, err := tx.Put(key, []byte("{not json"))
		return err
	}))
	l, err := eng.Lineage("work", "/ws")
	require.NoError(t, err)
	require.Nil(t, l, "an unreadable lineage reads as none")
	ls, err := eng.Lineages("", true)
	require.NoError(t, err)
	require.Empty(t, ls)

	_, err = eng.ArchiveLineage("work", "/ws")
	require.NoError(t, err)
	var kept []byte
	require.NoError(t, st.View(t.Context(), func(tx store.ReadTx) error {
		return tx.Scan("lineage-archive/work/", store.ScanOptions{}, func(it store.Item) bool {
			kept = it.Value
			return false
		})
	}))
	require.Equal(t, "{not json", string(kept), "archived as it was, never deleted")
}

func TestSessionSpecValidation(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	for name, spec := range map[string]sdk.TaskSpec{
		"bad name":  {Argv: []string{"a"}, Cwd: "/ws", Session: &sdk.SessionSpec{Name: "a/b"}},
		"no cwd":    {Argv: []string{"a"}, Session: &sdk.SessionSpec{Name: "work"}},
		"ctl chars": {Argv: []string{"a"}, Cwd: "/ws", Session: &sdk.SessionSpec{Name: "work", Step: "a\x1b"}},
	} {
		_, _, err := eng.CreateTask(engine.CreateTaskInput{Runtime: "cli", OwnerKey: "o", Spec: spec})
		require.ErrorIs(t, err, sdk.ErrInvalid, name)
	}
}
