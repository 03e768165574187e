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
	"github.com/flowgate/flowgate/sdk"
)

// A task that ends before the runner first looks at it costs two writes
// after its creation: its start and its end. The identities of its
// processes are not recorded, since it is already over.
func TestShortTaskWritesItsStartAndItsEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var writes atomic.Int64
	st, err := store.Open(filepath.Join(dir, "flowgate.db"), store.Options{OnCommit: func(time.Duration) { writes.Add(1) }})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	var r *runner.Runner
	eng, err := engine.New(st, engine.Config{Notify: func(c engine.Change) { r.Notify(c) }})
	require.NoError(t, err)
	// The launch returns once the shim is done, so the runner's first look
	// finds the task over; the poll is far longer than the test.
	launchAndWait := func(dir string, env []string) (*os.Process, error) {
		p, err := launchShim(dir, env)
		if err == nil {
			_, err = p.Wait()
		}
		return p, err
	}
	r, err = runner.New(eng, runner.Config{Home: dir, Launch: launchAndWait, Poll: time.Hour})
	require.NoError(t, err)
	require.NoError(t, r.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, r.Stop(context.Background())) })

	before := writes.Load()
	task, _, err := eng.CreateTask(engine.CreateTaskInput{OwnerKey: "t", Spec: sdk.TaskSpec{Argv: []string{"true"}}})
	require.NoError(t, err)
	got := waitTask(t, eng, task.ID, ended, waitLimit)
	require.Equal(t, sdk.TaskSucceeded, got.Status)
	require.Equal(t, int64(3), writes.Load()-before, "create, start, end")
}
