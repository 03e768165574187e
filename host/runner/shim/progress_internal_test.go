package shim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// privateProgress makes a progress file the task created 0600, creates
// none, leaves the file a symbolic link points to alone, and does not
// block on a FIFO.
func TestPrivateProgress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mode := func(path string) os.FileMode {
		fi, err := os.Lstat(path)
		require.NoError(t, err)
		return fi.Mode().Perm()
	}

	wide := filepath.Join(dir, "wide")
	require.NoError(t, os.WriteFile(wide, nil, 0o600))
	require.NoError(t, os.Chmod(wide, 0o666))
	privateProgress(wide)
	require.Equal(t, os.FileMode(0o600), mode(wide))

	missing := filepath.Join(dir, "missing")
	privateProgress(missing)
	require.NoFileExists(t, missing)

	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, nil, 0o600))
	require.NoError(t, os.Chmod(target, 0o644))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(target, link))
	privateProgress(link)
	require.Equal(t, os.FileMode(0o644), mode(target), "the file behind a link keeps its mode")

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, unix.Mkfifo(fifo, 0o644))
	require.NoError(t, os.Chmod(fifo, 0o644))
	privateProgress(fifo) // returns: no writer is waited for
	require.Equal(t, os.FileMode(0o644), mode(fifo), "only a regular file is changed")

	privateProgress("")
}
