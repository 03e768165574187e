package runner_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/stored"
	"github.com/flowgate/flowgate/sdk"
)

func TestAdmissionIsFIFOAndCapped(t *testing.T) {
	t.Parallel()
	h := startHome(t, func(c *runner.Config) { c.MaxRunning = 1 })
	require.Equal(t, 1, h.gw.run.MaxRunning())
	peak := watchRunning(t, h.eng())
	var ids, want []string
	for i := range 5 {
		label := fmt.Sprintf("task-%d", i)
		ids = append(ids, h.create(h.spec("echo "+label+" >> order; sleep 0.1")).ID)
		want = append(want, label)
	}
	var tasks []*stored.Task
	for _, id := range ids {
		got := h.wait(id)
		require.Equal(t, sdk.TaskSucceeded, got.Status)
		require.Equal(t, 1, got.Attempts)
		tasks = append(tasks, got)
	}
	require.Equal(t, want, h.lines("order"))
	require.Equal(t, 1, peak())
	for i := 1; i < len(tasks); i++ {
		require.False(t, tasks[i].StartedAt.Before(tasks[i-1].EndedAt),
			"task %d started at %s, before task %d ended at %s", i, tasks[i].StartedAt, i-1, tasks[i-1].EndedAt)
	}
}

// watchRunning samples how many tasks of eng are running until the
// returned function is called; it returns the most it saw.
func watchRunning(t *testing.T, eng *engine.Engine) (peak func() int) {
	stop, done := make(chan struct{}), make(chan struct{})
	most := 0
	go func() {
		defer close(done)
		for {
			page, err := eng.ListTasks(engine.TaskFilter{Status: sdk.TaskRunning})
			if err != nil {
				t.Errorf("list running tasks: %v", err)
				return
			}
			most = max(most, len(page.Tasks))
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return func() int {
		close(stop)
		<-done
		return most
	}
}

func TestQueueSurvivesRestart(t *testing.T) {
	t.Parallel()
	h := startHome(t, func(c *runner.Config) { c.MaxRunning = 1 })
	var ids []string
	for i := range 3 {
		ids = append(ids, h.create(h.spec(fmt.Sprintf("echo x >> ran-%d; sleep 0.5", i))).ID)
	}
	polltest.Until(t, "the first task's child to start", func() bool {
		return childStarted(runner.LogDir(h.dir, ids[0], 1))
	})
	h.restart()
	for i, id := range ids {
		got := h.wait(id)
		require.Equal(t, sdk.TaskSucceeded, got.Status, "errors: %q", got.Errors)
		require.Equal(t, 1, got.Attempts)
		require.Equal(t, []string{"x"}, h.lines(fmt.Sprintf("ran-%d", i)))
	}
}

func TestIdempotentCreateRunsOnce(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	const n = 16
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		created int
		ids     = map[string]bool{}
	)
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			task, ok, err := h.eng().CreateTask(engine.CreateTaskInput{
				OwnerKey: "t", IdempotencyKey: "nightly-backup", Spec: h.spec("echo x >> ran; sleep 0.2"),
			})
			if err != nil {
				t.Errorf("create: %v", err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ids[task.ID] = true
			if ok {
				created++
			}
		})
	}
	close(start)
	wg.Wait()
	require.Equal(t, 1, created)
	require.Len(t, ids, 1)
	page, err := h.eng().ListTasks(engine.TaskFilter{})
	require.NoError(t, err)
	require.Len(t, page.Tasks, 1)
	got := h.wait(page.Tasks[0].ID)
	require.Equal(t, sdk.TaskSucceeded, got.Status)
	require.Equal(t, 1, got.Attempts)
	require.Equal(t, []string{"x"}, h.lines("ran"))
}

// TestDrainingStartsNothing: while Draining says so, a queued task stays
// queued through several dispatch passes; once it stops, the task runs.
func TestDrainingStartsNothing(t *testing.T) {
	t.Parallel()
	var draining atomic.Bool
	var asked atomic.Int64
	draining.Store(true)
	h := startHome(t, func(c *runner.Config) {
		c.Draining = func() bool { asked.Add(1); return draining.Load() }
	})
	task := h.create(h.spec("echo ran"))
	seen := asked.Load()
	polltest.Until(t, "three dispatch passes asking whether the runner drains", func() bool { return asked.Load() >= seen+3 })
	got, err := h.eng().ResolveTask(task.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskQueued, got.Status, "a draining runner started a task")
	draining.Store(false)
	require.Equal(t, sdk.TaskSucceeded, h.wait(task.ID).Status)
}

// TestLabelsChooseTheTasks: a runner starts a task that asks for a label
// it carries, and any task that asks for none; one that asks for another
// label stays queued through several dispatch passes.
func TestLabelsChooseTheTasks(t *testing.T) {
	t.Parallel()
	var passes atomic.Int64
	h := startHome(t, func(c *runner.Config) {
		c.Labels = []string{"gpu", "zone=eu"}
		c.Draining = func() bool { passes.Add(1); return false }
	})
	spec := func(on string) sdk.TaskSpec {
		s := h.spec("echo ran")
		s.On = on
		return s
	}
	other := h.create(spec("cpu"))
	require.Equal(t, sdk.TaskSucceeded, h.wait(h.create(spec("gpu")).ID).Status)
	require.Equal(t, sdk.TaskSucceeded, h.wait(h.create(spec("")).ID).Status)
	seen := passes.Load()
	polltest.Until(t, "three more dispatch passes", func() bool { return passes.Load() >= seen+3 })
	got, err := h.eng().ResolveTask(other.ID)
	require.NoError(t, err)
	require.Equal(t, sdk.TaskQueued, got.Status, "a task for another label was started")
}
