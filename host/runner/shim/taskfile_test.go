package shim_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/host/runner/shim"
)

// OpenTaskFile opens a regular file, and refuses at once, naming what it
// found, anything a task may have put in its place.
func TestOpenTaskFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	require.NoError(t, os.WriteFile(at("regular"), []byte("x"), 0o600))
	require.NoError(t, syscall.Mkfifo(at("fifo"), 0o600))
	require.NoError(t, os.Symlink("/dev/zero", at("zero")))
	require.NoError(t, os.Symlink(at("regular"), at("link")))
	require.NoError(t, os.Mkdir(at("dir"), 0o700))

	f, err := shim.OpenTaskFile(at("regular"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = shim.OpenTaskFile(at("missing"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	for name, kind := range map[string]string{
		"fifo": "a named pipe (FIFO)", "zero": "a symbolic link", "link": "a symbolic link", "dir": "a directory",
	} {
		_, err := shim.OpenTaskFile(at(name))
		require.True(t, errors.Is(err, shim.ErrNotRegular), "%s: %v", name, err)
		require.ErrorContains(t, err, at(name)+" is "+kind+", not a regular file")
	}
}
