package runner_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProgressFileIsPrivateWhateverTheUmask: a task that appends to its
// progress file with the shell's >> creates it with its umask's mode (no
// one creates it before the task writes progress); the shim makes it 0600
// when the task ends, before it records the status. Not parallel: the
// umask is the process's.
func TestProgressFileIsPrivateWhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
	h := startHome(t, nil)
	task := h.create(h.spec(`echo '{"fraction":0.5}' >> "$FLOWGATE_PROGRESS"`))
	h.wait(task.ID)
	fi, err := os.Stat(filepath.Join(h.dir, "logs", task.ID, "progress.jsonl"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "progress.jsonl is private under umask 000")
}
