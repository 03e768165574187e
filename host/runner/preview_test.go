package runner_test

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/engine"
	"github.com/flowgate/flowgate/host/polltest"
	"github.com/flowgate/flowgate/host/runner"
	"github.com/flowgate/flowgate/host/runner/shim"
	"github.com/flowgate/flowgate/host/store"
	"github.com/flowgate/flowgate/sdk"
)

// Preview over an Overlay shows what Reconcile would record, and changes
// nothing: not the store file, not an attempt's files, not a process.
// The next Reconcile records it.
func TestPreview(t *testing.T) {
	t.Parallel()
	h := startHome(t, nil)
	live := h.create(h.spec("sleep 30"))
	liveDir := runner.LogDir(h.dir, live.ID, 1)
	polltest.Until(t, "the child to start", func() bool { return childStarted(liveDir) })
	h.close()
	h.open()
	_, err := h.eng().CancelTask(live.ID)
	require.NoError(t, err)
	ended, dir := h.createRunning(h.spec("echo ended >> ran"))
	writeJSON(t, dir, shim.InfoFile, impostor(t, os.Getpid()))
	writeJSON(t, dir, shim.StatusFile, shim.Status{ExitCode: 0, StartedAt: time.Now(), EndedAt: time.Now()})
	dead, dir := h.createRunning(h.spec("echo dead >> ran"))
	writeJSON(t, dir, shim.InfoFile, impostor(t, os.Getpid()))
	unclaimed, unclaimedDir := h.createRunning(h.spec("echo unclaimed >> ran"))
	h.close()

	path := filepath.Join(h.dir, "flowgate.db")
	before := fileHash(t, path)
	base, err := store.OpenReadOnly(path, store.Options{})
	require.NoError(t, err)
	o := store.NewOverlay(base)
	eng, err := engine.New(o, engine.Config{})
	require.NoError(t, err)
	require.NoError(t, runner.Preview(context.Background(), eng, h.dir))
	want := map[string]sdk.TaskStatus{
		live.ID:      sdk.TaskRunning,
		ended.ID:     sdk.TaskSucceeded,
		dead.ID:      sdk.TaskLost,
		unclaimed.ID: sdk.TaskQueued,
	}
	for id, status := range want {
		got, err := eng.GetTask(id)
		require.NoError(t, err)
		require.Equal(t, status, got.Status, "preview of %s, errors: %q", id, got.Errors)
	}
	require.NoError(t, o.Close())
	require.Equal(t, before, fileHash(t, path), "Preview changed the store file")
	require.FileExists(t, filepath.Join(unclaimedDir, shim.SpecFile), "Preview withdrew a launch")
	require.True(t, shim.Alive(shimOf(t, liveDir)), "Preview signalled a task")

	h.open()
	for id := range want {
		got, err := h.eng().GetTask(id)
		require.NoError(t, err)
		require.Equal(t, sdk.TaskRunning, got.Status, "%s was recorded before a writer reconciled", id)
	}
	require.NoError(t, runner.Reconcile(context.Background(), h.eng(), h.dir))
	for id, status := range want {
		got, err := h.eng().GetTask(id)
		require.NoError(t, err)
		require.Equal(t, status, got.Status, "reconcile of %s, errors: %q", id, got.Errors)
	}
	require.Empty(t, h.lines("ran"), "a command ran")
	polltest.Until(t, "the cancel to reach the live task", func() bool {
		require.NoError(t, runner.Reconcile(context.Background(), h.eng(), h.dir))
		got, err := h.eng().GetTask(live.ID)
		require.NoError(t, err)
		return got.Status == sdk.TaskCancelled
	})
}

// fileHash is the SHA-256 of the file at path.
func fileHash(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return sha256.Sum256(data)
}
