package engine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// Each attempt's start and end are recorded with the start, the requeue
// and the end themselves, in order, so a timeline can draw every try.
func TestAttemptTimesFollowEveryAttempt(t *testing.T) {
	t.Parallel()
	eng, _, c := newClockEngine(t)
	t0 := c.t
	step := func() time.Time { c.t = c.t.Add(time.Second); return c.t }
	task := detached(t, eng)
	require.Empty(t, task.AttemptTimes, "a queued task has no attempt yet")
	var want []sdk.AttemptTime
	for n := 1; n <= 2; n++ {
		start := step()
		_, err := eng.StartTask(task.ID, engine.StartInput{})
		require.NoError(t, err)
		end := step()
		task, err = eng.RequeueTask(task.ID, engine.RequeueInput{Attempt: n, Error: "flaky", RetryAt: end.Add(time.Second)})
		require.NoError(t, err)
		want = append(want, sdk.AttemptTime{Attempt: n, StartedAt: start, EndedAt: end})
	}
	start := step()
	task, err := eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	require.Equal(t, append(want, sdk.AttemptTime{Attempt: 3, StartedAt: start}), task.AttemptTimes, "a running attempt has no end yet")
	end := step()
	task, err = eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded, Attempt: 3})
	require.NoError(t, err)
	want = append(want, sdk.AttemptTime{Attempt: 3, StartedAt: start, EndedAt: end})
	require.Equal(t, want, task.AttemptTimes)
	require.Equal(t, t0, task.CreatedAt, "the first attempt was queued from the task's creation")
}

// The times stay bounded: a task tried more often keeps its latest.
func TestAttemptTimesStayBounded(t *testing.T) {
	t.Parallel()
	eng := newEngine(t)
	task := detached(t, eng)
	for i := range 40 {
		_, err := eng.StartTask(task.ID, engine.StartInput{})
		require.NoError(t, err)
		task, err = eng.RequeueTask(task.ID, engine.RequeueInput{Attempt: i + 1})
		require.NoError(t, err)
	}
	require.Len(t, task.AttemptTimes, 32)
	require.Equal(t, 9, task.AttemptTimes[0].Attempt)
	require.Equal(t, 40, task.AttemptTimes[31].Attempt)
}

// A record written before attempt times were kept loads, and its end is
// recorded as ever, without inventing the times of its attempts; a task
// cancelled while queued has no attempt.
func TestAttemptTimesOfOlderRecords(t *testing.T) {
	t.Parallel()
	eng, st, _ := newClockEngine(t)
	task := detached(t, eng)
	task, err := eng.StartTask(task.ID, engine.StartInput{})
	require.NoError(t, err)
	var legacy map[string]any
	b, err := json.Marshal(task)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &legacy))
	delete(legacy, "attempt_times")
	b, err = json.Marshal(legacy)
	require.NoError(t, err)
	require.NoError(t, st.Update(t.Context(), func(tx store.Tx) error {
		_, err := tx.Put("task/"+task.ID, b)
		return err
	}))
	done, err := eng.FinishTask(task.ID, engine.FinishInput{Status: sdk.TaskSucceeded})
	require.NoError(t, err)
	require.Equal(t, sdk.TaskSucceeded, done.Status)
	require.Empty(t, done.AttemptTimes)

	queued := detached(t, eng)
	cancelled, err := eng.CancelTask(queued.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskCancelled, cancelled.Status)
	require.Empty(t, cancelled.AttemptTimes)
}
