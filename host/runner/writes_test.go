package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

// counted is a store, engine and runner over a home, with a count of the
// store's writes.
type counted struct {
	st     *store.Bolt
	eng    *engine.Engine
	run    *runner.Runner
	writes atomic.Int64
}

// openCounted opens dir's store and starts a runner over it that starts
// shims with launch and looks at running tasks every poll.
func openCounted(t *testing.T, dir string, launch func(string, []string) (*os.Process, error), poll time.Duration) *counted {
	t.Helper()
	c := newCounted(t, dir, runner.Config{Launch: launch, Poll: poll})
	require.NoError(t, c.run.Start(context.Background()))
	return c
}

// newCounted opens dir's store and makes a runner over it with cfg (its
// Home dir), not started.
func newCounted(t *testing.T, dir string, cfg runner.Config) *counted {
	t.Helper()
	c := &counted{}
	var err error
	// MaxBatch 1: each write is its own commit, so the count is of writes,
	// not of the group commits that concurrent writes may share.
	c.st, err = store.Open(filepath.Join(dir, "flowgate.db"), store.Options{MaxBatch: 1, OnCommit: func(time.Duration) { c.writes.Add(1) }})
	require.NoError(t, err)
	c.eng, err = engine.New(c.st, engine.Config{})
	require.NoError(t, err)
	cfg.Home = dir
	c.run, err = runner.New(c.eng, cfg)
	require.NoError(t, err)
	c.eng.Listen("runner", c.run)
	return c
}

// writesSince stops the runner and returns the writes made since the
// count was before. A write is counted after its Update returns, which
// is after a reader can see it; once Stop returns, every Update the
// runner began has returned and been counted.
func (c *counted) writesSince(t *testing.T, before int64) int64 {
	t.Helper()
	require.NoError(t, c.run.Stop(context.Background()))
	return c.writes.Load() - before
}

func (c *counted) close(t *testing.T) {
	t.Helper()
	require.NoError(t, c.run.Stop(context.Background()))
	require.NoError(t, c.st.Close())
}

// A task that ends before the runner first looks at it costs two writes
// after its creation: its start and its end. The identities of its
// processes are not recorded, since it is already over.
func TestShortTaskWritesItsStartAndItsEnd(t *testing.T) {
	t.Parallel()
	// The launch returns once the shim is done, so the runner's first look
	// finds the task over; the poll is far longer than the test.
	launchAndWait := func(dir string, env []string) (*os.Process, error) {
		p, err := launchShim(dir, env)
		if err == nil {
			_, err = p.Wait()
		}
		return p, err
	}
	c := openCounted(t, t.TempDir(), launchAndWait, time.Hour)
	t.Cleanup(func() { c.close(t) })

	before := c.writes.Load()
	task, _, err := c.eng.CreateTask(engine.CreateTaskInput{OwnerKey: "t", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	require.NoError(t, err)
	got := waitTask(t, c.eng, task.ID, ended, waitLimit)
	require.Equal(t, sdk.TaskSucceeded, got.Status)
	require.Equal(t, int64(3), c.writesSince(t, before), "create, start, end")
}

// A task that ends while another waits for its slot hands the slot over
// in one write: the end of the one and the start of the other. Three
// short tasks one at a time cost four writes, not six.
func TestAnEndingTaskHandsItsSlotToTheNextInOneWrite(t *testing.T) {
	t.Parallel()
	c := oneAtATime(t)
	var ids []string
	for range 3 {
		task, _, err := c.eng.CreateTask(engine.CreateTaskInput{OwnerKey: "t", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
		require.NoError(t, err)
		ids = append(ids, task.ID)
	}
	before := c.writes.Load()
	require.NoError(t, c.run.Start(context.Background()))
	var got []*stored.Task
	for _, id := range ids {
		got = append(got, waitTask(t, c.eng, id, ended, waitLimit))
		require.Equal(t, sdk.TaskSucceeded, got[len(got)-1].Status)
	}
	require.Equal(t, int64(4), c.writesSince(t, before), "the first start, two hand-overs, the last end")
	for i := 1; i < len(got); i++ {
		require.Equal(t, got[i-1].EndedAt, got[i].StartedAt, "task %d starts as task %d ends", i+1, i)
	}
}

// A hand-over whose start fails, not as a refusal (the next task's flow
// record is gone, so nothing of the hand-over is written), still records
// the end of the task that ended, alone.
func TestAFailedHandOverStillRecordsTheEnd(t *testing.T) {
	t.Parallel()
	c := oneAtATime(t)
	first, _, err := c.eng.CreateTask(engine.CreateTaskInput{OwnerKey: "t", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	require.NoError(t, err)
	next, _, err := c.eng.CreateTask(engine.CreateTaskInput{OwnerKey: "t", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	require.NoError(t, err)
	require.NoError(t, c.st.Update(t.Context(), func(tx store.Tx) error { return tx.Delete("flow/" + next.FlowID) }))
	require.NoError(t, c.run.Start(context.Background()))

	got := waitTask(t, c.eng, first.ID, ended, waitLimit)
	require.Equal(t, sdk.TaskSucceeded, got.Status)
}

// A runner that reattaches to a running task after a restart does not
// record its processes again: cancelling it then costs the cancel and the
// end.
func TestReattachWritesNothingAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := openCounted(t, dir, launchShim, 20*time.Millisecond)
	task, _, err := c.eng.CreateTask(engine.CreateTaskInput{OwnerKey: "t", Spec: sdk.TaskSpec{Argv: []string{"sleep", "30"}}})
	require.NoError(t, err)
	waitTask(t, c.eng, task.ID, func(t *stored.Task) bool { return t.PID != 0 }, waitLimit)
	c.close(t)

	c = openCounted(t, dir, launchShim, 20*time.Millisecond)
	t.Cleanup(func() { c.close(t) })
	before := c.writes.Load()
	_, err = c.eng.CancelTask(task.ID)
	require.NoError(t, err)
	got := waitTask(t, c.eng, task.ID, ended, waitLimit)
	require.Equal(t, sdk.TaskCancelled, got.Status)
	require.Equal(t, int64(2), c.writesSince(t, before), "the cancel and the end")
}

// oneAtATime is a counted runner with one slot whose launches return once
// the shim has exited, so each task has ended before the runner looks
// for the next and a hand-over happens at every end.
func oneAtATime(t *testing.T) *counted {
	t.Helper()
	launchAndWait := func(dir string, env []string) (*os.Process, error) {
		p, err := launchShim(dir, env)
		if err == nil {
			_, err = p.Wait()
		}
		return p, err
	}
	c := newCounted(t, t.TempDir(), runner.Config{Launch: launchAndWait, Poll: time.Hour, MaxRunning: 1})
	t.Cleanup(func() { c.close(t) })
	return c
}
