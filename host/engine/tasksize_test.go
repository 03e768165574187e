package engine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// storedSize is the size of task id's record in the store.
func storedSize(t *testing.T, st store.Store, id string) int {
	t.Helper()
	var n int
	require.NoError(t, st.View(t.Context(), func(tx store.ReadTx) error {
		it, err := tx.Get("task/" + id)
		n = len(it.Value)
		return err
	}))
	return n
}

// bigResult is a result whose inline stdout, all characters JSON escapes,
// encodes to far more than its 256 KiB.
func bigResult() *sdk.Result {
	out := strings.Repeat("<\x01>", 256<<10/3)
	return &sdk.Result{StdoutBytes: int64(len(out)), StdoutSHA256: "digest", Stdout: out, JSON: json.RawMessage(`"` + strings.Repeat(`\u0001`, 40<<10) + `"`), Summary: "last"}
}

// Thousands of milestones and big progress lines keep the record bounded:
// the first and latest milestones stay, the rest are counted, the latest
// progress is always recorded, and the task ends.
func TestMilestonesAndProgressStayBounded(t *testing.T) {
	t.Parallel()
	eng, st, _ := newClockEngine(t)
	task := detached(t, eng)
	_, err := eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	var off int64
	for batch := range 50 {
		in := engine.ProgressInput{From: off, To: off + 100}
		for i := range 100 {
			in.Milestones = append(in.Milestones, sdk.Milestone{
				Name: fmt.Sprintf("m%d", batch*100+i+1), Message: strings.Repeat("<", 4<<10),
				Data: json.RawMessage(`"` + strings.Repeat("x", 8<<10) + `"`)})
		}
		frac := float64(batch) / 50
		in.Progress = &sdk.Progress{Fraction: &frac, Message: strings.Repeat("&", 60<<10), Data: json.RawMessage(`"` + strings.Repeat("y", 60<<10) + `"`)}
		task, err = eng.RecordProgress(task.ID, in)
		require.NoError(t, err, "batch %d", batch)
		off = in.To
		require.LessOrEqual(t, storedSize(t, st, task.ID), store.MaxValueSize-(128<<10), "a running task leaves room for its end")
	}
	require.Len(t, task.Milestones, 64)
	require.Equal(t, int64(5000-64), task.MilestonesDropped)
	require.Equal(t, "m1", task.Milestones[0].Name)
	require.Equal(t, int64(8), task.Milestones[7].Seq)
	require.Equal(t, int64(5000), task.Milestones[63].Seq)
	require.Equal(t, "m5000", task.Milestones[63].Name)

	one := 1.0
	task, err = eng.RecordProgress(task.ID, engine.ProgressInput{From: off, To: off + 1, Progress: &sdk.Progress{Fraction: &one},
		Milestones: []sdk.Milestone{{Name: "last"}}})
	require.NoError(t, err)
	require.Equal(t, 1.0, *task.Progress.Fraction, "the final progress is recorded")
	require.Equal(t, int64(5001), task.Milestones[63].Seq)

	code := 0
	done, err := eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded, ExitCode: &code, Result: bigResult()})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskSucceeded, done.Status)
	got, err := eng.GetTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskSucceeded, got.Status)
	require.Equal(t, "digest", got.Result.StdoutSHA256)
}

// A record already close to the store's limit when its task ends (written
// by a version that did not bound milestones) still records the end: what
// the task produced is shed, never the end.
func TestTaskEndRecordedForRecordNearLimit(t *testing.T) {
	t.Parallel()
	eng, st, _ := newClockEngine(t)
	task := detached(t, eng)
	task, err := eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	legacy := *task
	for i := range 3900 {
		legacy.Milestones = append(legacy.Milestones, sdk.Milestone{Seq: int64(i + 1), Name: fmt.Sprintf("m%d", i+1), Message: strings.Repeat("z", 200)})
	}
	b, err := json.Marshal(&legacy)
	require.NoError(t, err)
	require.Greater(t, len(b), store.MaxValueSize-64<<10)
	require.LessOrEqual(t, len(b), store.MaxValueSize)
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("task/"+task.ID, b)
		return err
	}))

	code := 0
	done, err := eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 1, ExitCode: &code, Result: bigResult()})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskSucceeded, done.Status)
	require.Equal(t, int64(3900), done.Milestones[len(done.Milestones)-1].Seq)
	require.Equal(t, int64(3900), int64(len(done.Milestones))+done.MilestonesDropped)
	f, err := eng.GetFlow(task.FlowID)
	require.NoError(t, err)
	require.Equal(t, sdk.FlowSucceeded, f.Status)
}

// A spec too large for a task record is refused when the task is created,
// with a message that says what to do.
func TestOversizedSpecRefused(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	_, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "me", Spec: sdk.TaskSpec{Argv: []string{"true"},
		Env: map[string]string{"BIG": strings.Repeat("x", engine.MaxSpecBytes)}}})
	require.ErrorIs(t, err, sdk.ErrInvalid)
	require.Contains(t, err.Error(), "pass large input as a file")
}

// Errors, one an attempt, keep the first and the latest.
func TestErrorsStayBounded(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	task := detached(t, eng)
	for i := range 40 {
		_, err := eng.StartTask(task.ID, engine.StartInput{})
		require.NoError(t, err)
		task, err = eng.RequeueTask(task.ID, engine.RequeueInput{Attempt: i + 1, Error: fmt.Sprintf("e%d %s", i+1, strings.Repeat("!", 4<<10))})
		require.NoError(t, err)
	}
	require.Len(t, task.Errors, 32)
	require.True(t, strings.HasPrefix(task.Errors[0], "e1 "))
	require.True(t, strings.HasPrefix(task.Errors[3], "e4 "))
	require.True(t, strings.HasPrefix(task.Errors[4], "e13 "))
	require.True(t, strings.HasPrefix(task.Errors[31], "e40 "))
	require.LessOrEqual(t, len(task.Errors[31]), 1<<10)
}

// A record from an older version whose spec alone nearly fills the store
// value still records its cancel and its end: the end sheds what the
// task produced (its inline output), never the end.
func TestLegacyBigSpecStillEnds(t *testing.T) {
	t.Parallel()
	eng, st, _ := newClockEngine(t)
	task := detached(t, eng)
	task, err := eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	legacy := *task
	legacy.Spec.Input = strings.Repeat("i", store.MaxValueSize-8<<10)
	b, err := json.Marshal(&legacy)
	require.NoError(t, err)
	require.LessOrEqual(t, len(b), store.MaxValueSize)
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("task/"+task.ID, b)
		return err
	}))
	_, err = eng.CancelTask(task.ID)
	require.NoError(t, err)
	done, err := eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskCancelled, Result: bigResult(), Error: strings.Repeat("e", 8<<10)})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskCancelled, done.Status)
	require.Zero(t, len(done.Result.Stdout), "the inline output was shed")
	require.Equal(t, "digest", done.Result.StdoutSHA256)
	require.Equal(t, len(legacy.Spec.Input), len(done.Spec.Input), "the spec is kept while the record fits")
}
