package filetrust_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowgate/flowgate/sdk/filetrust"
)

// Runnable refuses an executable, or one a symbolic link names, when
// another user owns it or its directory, or group or others can write
// either, and says what to run; a system executable root owns passes.
// nobody is the uid tests hand files to when they need another user's.
const nobody = 65534

// requireRoot skips a test that must chown files to another user.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to give a file to another user (chown); run the tests as root to cover it")
	}
}

func TestRunnableRefusesWhatAnotherUserControls(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	sh, err := exec.LookPath("sh")
	require.NoError(t, err)
	require.NoError(t, filetrust.Runnable(sh), "root's system executables pass")

	exe := func(dir string) string {
		t.Helper()
		require.NoError(t, os.MkdirAll(dir, 0o755))
		p := filepath.Join(dir, "x")
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
		return p
	}
	base := t.TempDir()
	ok := exe(filepath.Join(base, "ok"))
	require.NoError(t, filetrust.Runnable(ok))

	foreign := exe(filepath.Join(base, "foreign"))
	require.NoError(t, os.Chown(foreign, nobody, nobody))
	foreignDir := filepath.Join(base, "foreign-dir")
	exe(foreignDir)
	require.NoError(t, os.Chown(foreignDir, nobody, nobody))
	loose := exe(filepath.Join(base, "loose"))
	require.NoError(t, os.Chmod(loose, 0o775))
	openDir := filepath.Join(base, "open")
	exe(openDir)
	require.NoError(t, os.Chmod(openDir, 0o777))
	link := filepath.Join(filepath.Dir(ok), "link")
	require.NoError(t, os.Symlink(foreign, link))

	for name, c := range map[string]struct{ path, says string }{
		"foreign file":         {foreign, "chown 0 " + foreign},
		"foreign directory":    {filepath.Join(foreignDir, "x"), foreignDir + " is owned by nobody (uid 65534), not by root"},
		"group-writable file":  {loose, loose + " is writable by group or others (mode 0775)"},
		"world-writable dir":   {filepath.Join(openDir, "x"), "run: chmod go-w " + openDir},
		"link to foreign file": {link, "chown 0 " + foreign},
	} {
		err := filetrust.Runnable(c.path)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), c.says, name)
	}
}
